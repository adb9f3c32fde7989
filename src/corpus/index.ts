export { DEFAULT_SEGMENT_MINUTES } from './documents.js';
export {
  assertReadable,
  CORPUS_FORMATS,
  type CorpusFormat,
  type FileFormat,
  formatOf,
  openText,
  readError,
} from './open.js';
export {
  heldoutLines,
  LABEL_COLUMNS,
  type LabeledPair,
  pairsAtLines,
  readPairs,
  TEXT_COLUMNS,
} from './pairs.js';
export {
  type BadRecord,
  type CorpusRecord,
  type LineRange,
  type ReadOptions,
  readSentenceRange,
  readSentences,
} from './sentences.js';

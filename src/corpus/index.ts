export { assertReadable, type FileFormat, formatOf, openText, readError } from './open.js';
export { type BadRecord, type CorpusRecord, type ReadOptions, readSentences } from './sentences.js';

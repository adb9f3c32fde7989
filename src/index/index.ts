/** The index stage: sharded FAISS indexes on disk, their manifest, and the factory choice. */

export {
  type AnnSearchParams,
  addonAvailable,
  getNumThreads,
  type Metric,
  type SearchResult,
  setNumThreads,
} from '../native/index.js';
export { planWithinBudget } from './budget.js';
export { type BuilderOptions, IndexBuilder } from './builder.js';
export { FULL_VERIFY_BELOW_BYTES, fileDigest, type VerifyMode, verifyChecksums } from './checksums.js';
export {
  type Bytes,
  codeBytes,
  formatBytes,
  type IndexCost,
  type IndexShape,
  indexCost,
  type RefineKind,
  trainingRam,
} from './cost.js';
export { type ExactOptions, exactTopK } from './exact.js';
export {
  chooseFactory,
  type FactoryOptions,
  type FactoryPlan,
  factoryString,
  type IndexPlan,
  planForFactory,
  pqSubquantizers,
  type SearchDefaults,
  searchDefaults,
} from './factory.js';
export {
  type FillOptions,
  type FillShardsOptions,
  fillPiece,
  fillShards,
  mergePieces,
  type Range,
  splitRange,
  writeIndexFile,
  writeOneShard,
} from './fill.js';
export { fromHalf, toHalf } from './half.js';
export { LiveIndex, MAX_OVERFETCH } from './live.js';
export {
  MANIFEST_FILE,
  type Manifest,
  ManifestSchema,
  type OperatingPoint,
  pickOperatingPoint,
  readManifest,
  shardFileName,
  type Tuning,
  VECTORS_FILE,
  writeManifest,
} from './manifest.js';
export {
  closeSegment,
  compactedFit,
  joinFits,
  type OpenSegment,
  openSegment,
  quantizationFit,
  type SegmentFit,
  type SegmentInfo,
  sealSegment,
} from './segment.js';
export {
  type ModelRef,
  type OpenOptions,
  ShardedIndex,
  type ShardSearchParams,
  type WriteOptions,
  writeIndexManifest,
  writeShardedIndex,
} from './sharded.js';
export { appendedSource, gatherRows, prng, sampleIds, spread, type VectorSource } from './source.js';
export { TombstoneSet } from './tombstones.js';
export { mergeTopK } from './topk.js';
export { DEFAULT_SEED, type TrainOptions, type TrainProgress, type TrainStage, trainIndex } from './train.js';
export {
  DEFAULT_TARGET_RECALL,
  DEFAULT_TUNE_QUERIES,
  heldOutIds,
  paretoFront,
  recallOf,
  type Tunable,
  type TuneOptions,
  type TuneResult,
  type TuneView,
  tunable,
  tuneIndex,
  tuneIndexDir,
  withOperatingPoints,
} from './tune.js';
export { VectorFile } from './vectors.js';

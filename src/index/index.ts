/** The index stage: sharded FAISS indexes on disk, their manifest, and the factory choice. */

export {
  addonAvailable,
  getNumThreads,
  type Metric,
  type SearchOptions,
  type SearchResult,
  setNumThreads,
} from '../native/index.js';
export { type BuilderOptions, IndexBuilder } from './builder.js';
export {
  chooseFactory,
  type FactoryOptions,
  type FactoryPlan,
  pqSubquantizers,
  type RefineKind,
} from './factory.js';
export { fromHalf, toHalf } from './half.js';
export {
  MANIFEST_FILE,
  type Manifest,
  ManifestSchema,
  readManifest,
  shardFileName,
  VECTORS_FILE,
} from './manifest.js';
export {
  type ModelRef,
  type OpenOptions,
  ShardedIndex,
  type WriteOptions,
  writeShardedIndex,
} from './sharded.js';
export { mergeTopK } from './topk.js';
export { VectorFile } from './vectors.js';

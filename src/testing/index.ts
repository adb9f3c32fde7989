/**
 * Support for tests and benchmarks: seeded synthetic vectors and their brute-force reference, `paramine
 * serve` as a child process.
 */
export { VECTORS_ONLY_MODEL, writeVectorIndex } from './index-dir.js';
export { freePort, type ServeChild, type SpawnServeOptions, spawnServe } from './serve.js';
export {
  bruteForceTopK,
  type ClusteredOptions,
  ClusteredSpace,
  clusteredDataset,
  clusteredSpace,
  denseIds,
  gaussianVectors,
  normalizeRows,
  Rng,
  recallAtK,
} from './vectors.js';

export { pairKey, UnionFind } from './cluster.js';
export type { JobContext } from './job-context.js';
export { alignJobDocuments } from './job-scope.js';
export { JobManager, type JobRunner, type JobStatus, type ManagerOptions } from './manager.js';
export { NeighbourhoodMeans, ratioMargin } from './margin.js';
export { type AddedSentences, MAX_FILE_SENTENCES, resolveDataPath } from './queries.js';
export { runJob } from './runner.js';
export {
  effectiveFilter,
  effectiveScope,
  FILTER_PRESETS,
  JOB_PRESETS,
  type JobSpec,
  type JobSpecInput,
  jobSpecSchema,
  PRESET_NAMES,
} from './spec.js';
export { FINISHED, type JobRecord, type JobState, JobStore, type MinedPair, type PairSide } from './store.js';

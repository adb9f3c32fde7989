/**
 * The queue stage (docs/distributed.md): distributed builds and mining jobs on BullMQ + Redis with a
 * shared work directory. Its commands are wired in src/cli: queue-command.ts (`index --queue`, `worker`)
 * and mine-queue-command.ts (`mine --queue`).
 */
export { parseQueueUrl, type RedisTarget, STAGES, type Stage } from './connection.js';
export { buildDistributed, type DistributedSummary } from './coordinator.js';
export { layout, type Marker, publish, readMarker } from './layout.js';
export { QueueMetrics } from './metrics.js';
export {
  type DistributedMineOptions,
  type DistributedMineSummary,
  mineDistributed,
  mineRanges,
} from './mine.js';
export {
  type QueueOptionsInput,
  queueOptionsSchema,
  type WorkerOptionsInput,
  workerOptionsSchema,
} from './options.js';
export { runWorker } from './worker.js';

/** The composition root every front end (server, mine, bench, queue, tests) opens the service through. */

export { type ContextSentence, type SentenceContext, sentenceContext } from '../store/index.js';
export { BatchedEmbedder, BatchedScorer } from './batched.js';
export { Batcher, type BatcherOptions, type SubmitOptions } from './batcher.js';
export { DEFAULT_RERANKER, openService } from './open.js';
export {
  type BatchOptions,
  DEFAULT_BATCH,
  type Jobs,
  type JobsOptions,
  type ModelName,
  type QueueName,
  type Service,
  type ServiceHooks,
  type ServiceOptions,
} from './service-types.js';
export {
  type AddItem,
  type AddOutcome,
  type MetaFilter,
  SEAL_AT,
  type SealOptions,
  SentenceWrites,
  type WriteStats,
} from './writes.js';

/** The composition root every front end (server, mine, bench, queue, tests) opens the service through. */

export { type ContextSentence, type SentenceContext, sentenceContext } from '../store/index.js';
export { BatchedEmbedder, BatchedScorer } from './batched.js';
export { Batcher, type BatcherOptions, type SubmitOptions } from './batcher.js';
export {
  type BatchOptions,
  DEFAULT_BATCH,
  DEFAULT_RERANKER,
  type Jobs,
  type JobsOptions,
  type ModelName,
  openService,
  type QueueName,
  type Service,
  type ServiceHooks,
  type ServiceOptions,
} from './open.js';
export {
  type AddItem,
  type AddOutcome,
  type MetaFilter,
  SEAL_AT,
  type SealOptions,
  SentenceWrites,
  type WriteStats,
} from './writes.js';

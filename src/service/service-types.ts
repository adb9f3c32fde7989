/**
 * What a front end gives the composition root (open.ts) and gets from it: the service's options, its
 * batching defaults, its hooks, and the Service handle itself.
 */
import type { AnnotationStore } from '../annotations/index.js';
import type { Domains } from '../domain/index.js';
import type { Embedder } from '../encode/index.js';
import type { Manifest, ShardedIndex, VectorFile, VerifyMode } from '../index/index.js';
import type { JobContext, JobManager, JobStore, ManagerOptions } from '../jobs/index.js';
import type { LabelMode } from '../models/ports.js';
import type { PairScorer } from '../rerank/index.js';
import type { SearchCore, Stage } from '../search/core.js';
import type { SentenceContext, SentenceStore } from '../store/index.js';
import type { LabelCuts } from './labels.js';
import type { SealOptions, SentenceWrites } from './writes.js';

/** Where a front end plugs its metrics in. */
export interface ServiceHooks {
  /** A model call ran `size` inputs (texts or pairs) gathered from the queue, in `ms`. */
  onBatch?: (model: QueueName, size: number, ms: number) => void;
  /** Inputs waiting for a model. */
  onQueueDepth?: (model: QueueName, depth: number) => void;
  /** A request was refused because the model's queue was full. */
  onRejected?: (model: QueueName) => void;
  /** Queued inputs dropped because their request was abandoned (the client disconnected). */
  onDropped?: (model: QueueName, items: number) => void;
  onStage?: (stage: Stage, ms: number) => void;
  /** The service took up the shards a compaction run beside it wrote (generation.ts). */
  onGeneration?: (manifest: Manifest) => void;
  /** A balanced call: the teacher labeled `pairs` of `of`; `shed` unsure ones it refused kept the student's. */
  onEscalated?: (pairs: number, of: number, shed: number) => void;
}

export type ModelName = 'encoder' | 'reranker';
/** A model queue: the teacher has one of its own, sized as the reranker's. */
export type QueueName = ModelName | 'teacher';

export interface BatchOptions {
  /** Most inputs per model call. */
  maxBatch: number;
  /** Longest wait to fill a batch; 0 sends what is queued at once. */
  maxWaitMs: number;
  /**
   * Most inputs waiting (default: encoder 512 texts, reranker 1024 pairs, a few seconds of work on 2
   * cores); a request that would overfill the queue is refused with OVERLOADED. Jobs are never refused.
   */
  maxQueue?: number | undefined;
  /**
   * Longest predicted wait (work queued ahead over the measured rate) a new request may face; beyond it
   * the request is refused at once with OVERLOADED (see batcher.ts). Infinity: by count only.
   */
  waitBudgetMs?: number | undefined;
  /** Most padded tokens (as the model's tokenizer counts them) per model call: one long text does not stall a batch of short ones. */
  maxBatchTokens?: number | undefined;
}

/** The batching defaults (`paramine serve`'s flags take theirs from here). */
export const DEFAULT_BATCH: Record<ModelName, Required<BatchOptions>> = {
  encoder: { maxBatch: 32, maxWaitMs: 2, maxQueue: 512, waitBudgetMs: 500, maxBatchTokens: 4096 },
  reranker: { maxBatch: 64, maxWaitMs: 2, maxQueue: 1024, waitBudgetMs: 500, maxBatchTokens: 8192 },
};

export interface ServiceOptions {
  index: string;
  /** ORT threads of an encoder session of the writes' own (0 / undefined: they share the queries' encoder). */
  writeThreads?: number | undefined;
  /** Seal the growing segment of added sentences at this size (default SEAL_AT), and what to do when a seal fails. */
  seal?: SealOptions | undefined;
  /** Encoder name or directory; default: the model the index was built with. */
  model?: string | undefined;
  /** Cross-encoder name or directory; undefined: the default one when present; false: none. */
  reranker?: string | false | undefined;
  /** Dynamic batching of the encoder's texts across concurrent requests. */
  batch?: BatchOptions | undefined;
  /** Dynamic batching of the cross-encoder's pairs across concurrent requests. */
  rerankBatch?: BatchOptions | undefined;
  /** Map the shards' inverted lists; default 'auto' (mapped above a quarter of RAM, see ShardedIndex). */
  mmap?: boolean | 'auto' | undefined;
  /** How the index files are checked against the manifest's checksums at open (default 'auto'). */
  verify?: VerifyMode | undefined;
  /**
   * ORT's idle intra-op threads spin-wait (ORT's default; `paramine serve` turns it off). The encoder and
   * the cross-encoder each have their own threads on the same cores, so spinning ones slow the other
   * model's run: rerank throughput 12 → 19 req/s on 2 cores without spinning (BENCHMARKS.md).
   */
  spinning?: boolean | undefined;
  /**
   * What embeds added sentences instead of this process (`serve --write-queue`: `paramine worker`s through
   * the queue); closed with the service.
   */
  writeEmbedder?: (Embedder & { close(): Promise<void> }) | undefined;
  /** Who labels pairs when a request names no mode (default `balanced`: the cascade, where configured). */
  labelsMode?: LabelMode | undefined;
  /** Open the cascade's teacher at start-up, in the background (`paramine serve`), not on first need. */
  warmTeacher?: boolean | undefined;
  /** Cross-encoder worker threads (0 / undefined: one per core for a graph scoring pair by pair, else one). */
  rerankWorkers?: number | undefined;
  hooks?: ServiceHooks | undefined;
}

export interface JobsOptions extends ManagerOptions {
  /** The LMDB directory jobs persist in. */
  dir: string;
  /** The directory job file scopes may name files in (none: file scopes are refused). */
  dataDir?: string | undefined;
}

export interface Jobs {
  manager: JobManager;
  store: JobStore;
}

export interface Service {
  core: SearchCore;
  store: SentenceStore;
  /** The shards searched now (a compaction's, once taken up: generation.ts). */
  index: ShardedIndex;
  /** The embeddings the indexer kept (jobs query with them instead of re-encoding), if any. */
  vectors: VectorFile | undefined;
  /** The encoder behind its batcher: what every query goes through (refused when the queue is full). */
  encoder: Embedder;
  /** The cross-encoder behind its batcher, when one is loaded. */
  reranker: PairScorer | undefined;
  /** The label cut of each model that may label a pair here (the student, its cascade's teacher), by name. */
  labelCuts: LabelCuts;
  /** The index's domains (`paramine domain add`), re-read when domains.json changes. */
  domains: Domains;
  /** The index directory and its manifest, as `GET /v1/index` shows them. */
  indexInfo(): { dir: string; manifest: ShardedIndex['manifest'] };
  /** The `n` sentences on each side of `id` in its document; undefined when it has no document. */
  context(id: number, n: number): SentenceContext | undefined;
  /** The index id of an id as a request gives it: the index's own, or one the user gave (user-ids.ts). */
  sentenceId(given: string): number;
  /** Adds and deletes while serving (POST /v1/sentences, DELETE /v1/sentences/{id}). */
  writes: SentenceWrites;
  /** What mining jobs run against. */
  jobContext(dataDir?: string): JobContext;
  /** A job manager over this service with its store in `dir`; closed with the service. */
  openJobs(options: JobsOptions): Jobs;
  /** The pair annotations' store in `dir` (its own LMDB environment); closed with the service. */
  openAnnotations(dir: string): AnnotationStore;
  /** Named readiness checks; all true means the service answers queries. */
  readiness(): Promise<Record<string, boolean>>;
  /** Closes the job managers opened here (pausing running jobs), then the models, index and store. */
  close(): Promise<void>;
}

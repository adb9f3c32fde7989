/**
 * The composition root: opens everything a front end needs over one index, once — the sentence store,
 * the shards (checked against the encoder's sha256 and dimension), the kept embeddings, the encoder and
 * the cross-encoder behind their batchers, the search core, and on request the job manager. `paramine
 * serve`, `paramine mine`, the benchmarks and the test helpers all start here; none builds its own.
 * Observability enters as hooks, so this module knows nothing of Prometheus or HTTP.
 */
import { basename, resolve } from 'node:path';
import { AnnotationStore } from '../annotations/index.js';
import { Domains, indexIdentity } from '../domain/index.js';
import { type Embedder, Encoder, type IdfWeights } from '../encode/index.js';
import {
  LiveIndex,
  type Manifest,
  readManifest,
  ShardedIndex,
  TombstoneSet,
  VectorFile,
  type VerifyMode,
} from '../index/index.js';
import { type JobContext, JobManager, JobStore, type ManagerOptions } from '../jobs/index.js';
import { DEFAULT_RERANKER } from '../models/catalog.js';
import type { LabelMode } from '../models/ports.js';
import { resolveModelDir } from '../models/resolve.js';
import { CrossEncoder, type PairScorer } from '../rerank/index.js';
import { indexIdf } from '../search/bertscore.js';
import { SearchCore, type Stage } from '../search/core.js';
import {
  openIndexSentences,
  type SentenceContext,
  type SentenceStore,
  sentenceContext,
} from '../store/index.js';
import { BatchedEmbedder, BatchedScorer } from './batched.js';
import { useIndex } from './cut-short.js';
import { type LabelCuts, labelCuts, labelPorts } from './labels.js';
import { ReadinessProbe } from './readiness.js';
import { resolveSentenceId } from './user-ids.js';
import { type SealOptions, SentenceWrites } from './writes.js';

export { DEFAULT_RERANKER };

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

class Closers {
  readonly #list: Array<() => Promise<void>> = [];
  #closed = false;
  /** What opens after the service closed (a teacher warming in the background) is closed at once. */
  add(close: () => Promise<void>): void {
    if (this.#closed) void close().catch(() => undefined);
    else this.#list.push(close);
  }
  async closeAll(): Promise<void> {
    this.#closed = true;
    for (const c of this.#list.splice(0).reverse()) await c();
  }
}

export async function openService(o: ServiceOptions): Promise<Service> {
  const closers = new Closers();
  try {
    return await open(o, closers);
  } catch (e) {
    await closers.closeAll();
    throw e;
  }
}

/** The models, the shards (checked against the encoder's sha256 and dimension), the store, the kept vectors. */
async function openParts(o: ServiceOptions, closers: Closers) {
  const use = await useIndex(o.index);
  closers.add(async () => use.release());
  const manifest = await readManifest(o.index);
  const encoder = await Encoder.open(resolveModelDir(o.model ?? manifest.model.id), { spinning: o.spinning });
  closers.add(() => encoder.close());
  const index = await ShardedIndex.open(o.index, {
    model: { id: encoder.modelId, sha256: encoder.onnxSha256 },
    dim: encoder.dim,
    mmap: o.mmap ?? 'auto',
    verify: o.verify ?? 'auto',
  });
  closers.add(() => index.close());
  const { store, groups, close } = openIndexSentences(o.index, manifest);
  closers.add(close);
  const vectors = await VectorFile.open(o.index);
  if (vectors) closers.add(() => vectors.close());
  const reranker = await openReranker(o, closers);
  return { manifest, encoder, index, store, vectors, groups, reranker };
}

async function open(o: ServiceOptions, closers: Closers): Promise<Service> {
  const { manifest, encoder, index, store, vectors, groups, reranker } = await openParts(o, closers);
  const hooks = o.hooks ?? {};
  const embedder = new BatchedEmbedder(encoder, batcherOptions('encoder', o.batch, hooks));
  const scorer = reranker && { port: labelPortsOf(o, reranker, closers) };
  const identity = indexIdentity(manifest);
  const { live, writes } = await openWrites(o, { index, store, embedder, manifest }, closers);
  const domains = new Domains(o.index, identity, (id) => writes.addedRow(id));
  let idf: Promise<IdfWeights> | undefined;
  const core = (unbounded: boolean) =>
    new SearchCore({
      encoder: embedder.port(unbounded),
      index: live,
      store,
      reranker: scorer?.port(unbounded),
      domains,
      tokens: encoder,
      idf: () => (idf ??= indexIdf(store, index.ntotal, encoder)),
      onStage: hooks.onStage,
    });
  const interactive = core(false);
  // Jobs share the models and queues but wait for room instead of being refused: they pace themselves.
  const bulk = core(true);
  let closed = false;
  closers.add(async () => {
    closed = true;
  });
  const probe = new ReadinessProbe({ encoder, index, reranker, open: () => !closed });
  const jobContext = (dataDir?: string): JobContext => ({
    core: bulk,
    encoder: embedder.port(true),
    ann: index,
    live,
    added: writes.added,
    store,
    vectors,
    groups,
    index: {
      name: basename(resolve(o.index)),
      // A rebuilt index under the same name is another index: its jobs do not resume on it.
      identity,
      ntotal: index.ntotal,
    },
    dataDir,
  });
  const jobManagers: Jobs[] = [];
  const annotationStores: AnnotationStore[] = [];
  return {
    core: interactive,
    store,
    index,
    vectors,
    encoder: embedder.port(false),
    reranker: scorer?.port(false),
    labelCuts: await labelCuts(reranker),
    domains,
    indexInfo: () => ({ dir: o.index, manifest: index.manifest }),
    context: (id: number, n: number) => sentenceContext(store, groups, id, n),
    sentenceId: (given: string) => resolveSentenceId(given, { groups, store, writes }),
    writes,
    jobContext,
    openJobs({ dir, dataDir, ...managerOptions }) {
      const jobStore = JobStore.open(dir);
      const jobs = {
        manager: new JobManager(jobStore, jobContext(dataDir), managerOptions),
        store: jobStore,
      };
      jobManagers.push(jobs);
      return jobs;
    },
    openAnnotations(dir) {
      const annotations = AnnotationStore.open(dir);
      annotationStores.push(annotations);
      return annotations;
    },
    readiness: () => probe.check(),
    close: () => closeService(jobManagers, annotationStores, closers),
  };
}

/** The student and, on first need, its teacher behind batchers: a cascade port per queue (labels.ts). */
function labelPortsOf(o: ServiceOptions, reranker: CrossEncoder, closers: Closers) {
  const hooks = o.hooks ?? {};
  const batched = (ce: CrossEncoder, queue: QueueName) =>
    new BatchedScorer(ce, batcherOptions('reranker', o.rerankBatch, hooks, queue));
  return labelPorts(reranker, batched(reranker, 'reranker'), (ce) => batched(ce, 'teacher'), {
    spinning: o.spinning,
    workers: o.rerankWorkers || undefined,
    mode: o.labelsMode,
    warm: o.warmTeacher,
    onTeacher: (close) => closers.add(close),
    onEscalated: hooks.onEscalated,
  });
}

/**
 * What added sentences are embedded with: the queries' encoder, or (`writeThreads`) a session of their
 * own on that many ORT threads, so a query never waits in the encoder's queue behind a write's batch.
 */
async function openWriteEncoder(
  o: ServiceOptions,
  modelId: string,
  shared: BatchedEmbedder,
  closers: Closers,
): Promise<Embedder> {
  if (o.writeEmbedder !== undefined) {
    const remote = o.writeEmbedder;
    closers.add(() => remote.close());
    return remote;
  }
  if (!o.writeThreads) return shared.port(true);
  const encoder = await Encoder.open(resolveModelDir(o.model ?? modelId), {
    spinning: o.spinning,
    threads: o.writeThreads,
  });
  closers.add(() => encoder.close());
  return new BatchedEmbedder(encoder, batcherOptions('encoder', o.batch, {})).port(true);
}

/** Writes while serving: a growing exact segment and tombstones over the built shards (writes.ts). */
async function openWrites(
  o: ServiceOptions,
  parts: { index: ShardedIndex; store: SentenceStore; embedder: BatchedEmbedder; manifest: Manifest },
  closers: Closers,
) {
  const { index, store } = parts;
  const embed = await openWriteEncoder(o, parts.manifest.model.id, parts.embedder, closers);
  const tombstones = new TombstoneSet();
  const live = new LiveIndex(index, tombstones);
  closers.add(() => live.close());
  const writes = await SentenceWrites.open(o.index, { store, live, embed, tombstones, ...o.seal });
  closers.add(() => writes.close());
  return { live, writes };
}

async function closeService(jobManagers: Jobs[], annotationStores: AnnotationStore[], closers: Closers) {
  // Running jobs pause at a batch boundary (committed) before anything they use goes away.
  for (const j of jobManagers.splice(0)) {
    await j.manager.close();
    await j.store.close();
  }
  for (const a of annotationStores.splice(0)) await a.close();
  await closers.closeAll();
}

function batcherOptions(
  model: ModelName,
  given: BatchOptions | undefined,
  hooks: ServiceHooks,
  queue: QueueName = model,
) {
  const d = DEFAULT_BATCH[model];
  return {
    maxBatch: given?.maxBatch ?? d.maxBatch,
    maxWaitMs: given?.maxWaitMs ?? d.maxWaitMs,
    maxQueue: given?.maxQueue ?? d.maxQueue,
    waitBudgetMs: given?.waitBudgetMs ?? d.waitBudgetMs,
    maxBatchCost: given?.maxBatchTokens ?? d.maxBatchTokens,
    onBatch: (n: number, ms: number) => hooks.onBatch?.(queue, n, ms),
    onQueueDepth: (n: number) => hooks.onQueueDepth?.(queue, n),
    onRejected: () => hooks.onRejected?.(queue),
    onDropped: (n: number) => hooks.onDropped?.(queue, n),
  };
}

async function openReranker(o: ServiceOptions, closers: Closers): Promise<CrossEncoder | undefined> {
  const name = o.reranker === undefined ? defaultReranker() : o.reranker;
  if (name === false || name === undefined) return undefined;
  const reranker = await CrossEncoder.open(resolveModelDir(name, 'reranker'), {
    spinning: o.spinning,
    workers: o.rerankWorkers || undefined,
  });
  closers.add(() => reranker.close());
  return reranker;
}

/** The committed paraphrase cross-encoder, when this checkout has it. */
function defaultReranker(): string | undefined {
  try {
    return resolveModelDir(DEFAULT_RERANKER, 'reranker');
  } catch {
    return undefined;
  }
}

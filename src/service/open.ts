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
} from '../index/index.js';
import { type JobContext, JobManager, JobStore } from '../jobs/index.js';
import { DEFAULT_RERANKER } from '../models/catalog.js';
import { resolveModelDir } from '../models/resolve.js';
import { CrossEncoder } from '../rerank/index.js';
import { indexIdf } from '../search/bertscore.js';
import { SearchCore } from '../search/core.js';
import { type GroupTables, openIndexSentences, type SentenceStore, sentenceContext } from '../store/index.js';
import { BatchedEmbedder, BatchedScorer } from './batched.js';
import { useIndex } from './cut-short.js';
import { currentShards, type GenerationParts, Generations } from './generation.js';
import { labelCuts, labelPorts } from './labels.js';
import { ReadinessProbe } from './readiness.js';
import {
  type BatchOptions,
  DEFAULT_BATCH,
  type Jobs,
  type ModelName,
  type QueueName,
  type Service,
  type ServiceHooks,
  type ServiceOptions,
} from './service-types.js';
import { resolveSentenceId } from './user-ids.js';
import { SentenceWrites } from './writes.js';

export { DEFAULT_RERANKER };

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
  const use = await useIndex(o.index, following(o));
  closers.add(async () => use.release());
  const manifest = await readManifest(o.index);
  const encoder = await Encoder.open(resolveModelDir(o.model ?? manifest.model.id), { spinning: o.spinning });
  closers.add(() => encoder.close());
  const openShards = () =>
    ShardedIndex.open(o.index, {
      model: { id: encoder.modelId, sha256: encoder.onnxSha256 },
      dim: encoder.dim,
      mmap: o.mmap ?? 'auto',
      verify: o.verify ?? 'auto',
    });
  const index = await openShards();
  // The shards searched at close: these, or a later generation's (generation.ts).
  const shards = { current: index };
  closers.add(() => shards.current.close());
  const { store, groups, close } = openIndexSentences(o.index, manifest);
  closers.add(close);
  const vectors = await VectorFile.open(o.index);
  if (vectors) closers.add(() => vectors.close());
  const reranker = await openReranker(o, closers);
  return { manifest, encoder, index, shards, openShards, store, vectors, groups, reranker };
}

/** A serving process takes up a compaction run beside it (its writes' follower looks for one). */
function following(o: ServiceOptions): boolean {
  return o.seal?.follow === true;
}

async function open(o: ServiceOptions, closers: Closers): Promise<Service> {
  const parts = await openParts(o, closers);
  const { manifest, encoder, index, store, vectors, groups, reranker } = parts;
  const hooks = o.hooks ?? {};
  const embedder = new BatchedEmbedder(encoder, batcherOptions('encoder', o.batch, hooks));
  const scorer = reranker && { port: labelPortsOf(o, reranker, closers) };
  let identity = indexIdentity(manifest);
  const jobManagers: Jobs[] = [];
  const generation: GenerationParts = {
    open: parts.openShards,
    onSwitch(next) {
      parts.shards.current = live.base;
      identity = indexIdentity(next);
      domains.follow(identity);
      hooks.onGeneration?.(next);
    },
    busy: () => jobManagers.some((j) => j.manager.busy),
  };
  const { live, writes } = await openWrites(o, { index, store, embedder, manifest, generation }, closers);
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
      idf: () => (idf ??= indexIdf(store, live.base.ntotal, encoder)),
      onStage: hooks.onStage,
    });
  const interactive = core(false);
  // Jobs share the models and queues but wait for room instead of being refused: they pace themselves.
  const bulk = core(true);
  const probe = readinessOf({ encoder, live, reranker }, closers);
  const name = basename(resolve(o.index));
  const jobContext = (dataDir?: string): JobContext =>
    jobContextOf(
      { core: bulk, encoder: embedder.port(true), live, writes, store, vectors, groups, dataDir },
      () => ({
        name,
        identity,
      }),
    );
  const annotationStores: AnnotationStore[] = [];
  return {
    core: interactive,
    store,
    get index() {
      return live.base;
    },
    vectors,
    encoder: embedder.port(false),
    reranker: scorer?.port(false),
    labelCuts: await labelCuts(reranker),
    domains,
    indexInfo: () => ({ dir: o.index, manifest: live.base.manifest }),
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

/** Named readiness checks over the models and the shards searched now, false once the service closes. */
function readinessOf(
  parts: { encoder: Encoder; live: LiveIndex; reranker: CrossEncoder | undefined },
  closers: Closers,
): ReadinessProbe {
  let closed = false;
  closers.add(async () => {
    closed = true;
  });
  const { encoder, live, reranker } = parts;
  return new ReadinessProbe({ encoder, index: currentShards(live), reranker, open: () => !closed });
}

/** What jobs run against: the shards searched now (a later generation's once taken up), the index's identity. */
function jobContextOf(
  parts: Pick<JobContext, 'core' | 'encoder' | 'store' | 'vectors' | 'dataDir'> & {
    live: LiveIndex;
    writes: SentenceWrites;
    groups: GroupTables | undefined;
  },
  index: () => { name: string; identity: string },
): JobContext {
  const { live, writes, ...rest } = parts;
  return {
    ...rest,
    // A job reads the shards it started with (the old ones stay open while it runs: generation.ts).
    get ann() {
      return live.base;
    },
    live,
    added: writes.added,
    get index() {
      // A rebuilt index under the same name is another index: its jobs do not resume on it.
      return { ...index(), ntotal: live.base.ntotal };
    },
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
  parts: {
    index: ShardedIndex;
    store: SentenceStore;
    embedder: BatchedEmbedder;
    manifest: Manifest;
    generation: GenerationParts;
  },
  closers: Closers,
) {
  const { index, store } = parts;
  const embed = await openWriteEncoder(o, parts.manifest.model.id, parts.embedder, closers);
  const tombstones = new TombstoneSet();
  const live = new LiveIndex(index, tombstones);
  closers.add(() => live.close());
  const generations = following(o) ? new Generations(o.index, live, parts.generation) : undefined;
  if (generations) closers.add(() => generations.close());
  const writes = await SentenceWrites.open(o.index, {
    store,
    live,
    embed,
    tombstones,
    generations,
    ...o.seal,
  });
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

/**
 * The composition root: opens everything a front end needs over one index, once — the sentence store,
 * the shards (checked against the encoder's sha256 and dimension), the kept embeddings, the encoder and
 * the cross-encoder behind their batchers, the search core, and on request the job manager. `paramine
 * serve`, `paramine mine`, the benchmarks and the test helpers all start here; none builds its own.
 * Observability enters as hooks, so this module knows nothing of Prometheus or HTTP.
 */
import { basename, join, resolve } from 'node:path';
import { type Embedder, Encoder } from '../encode/index.js';
import { readManifest, ShardedIndex, VectorFile } from '../index/index.js';
import { type JobContext, JobManager, JobStore, type ManagerOptions } from '../jobs/index.js';
import { resolveModelDir } from '../models/resolve.js';
import { CrossEncoder, type PairScorer } from '../rerank/index.js';
import { BatchingEncoder } from '../search/batcher.js';
import { SearchCore, type Stage } from '../search/core.js';
import { GROUPS_DIR, GroupTables, groupTableIdentity, SentenceStore } from '../store/index.js';

export const DEFAULT_RERANKER = 'paramine-paraphrase-minilm';

/** Where a front end plugs its metrics in. */
export interface ServiceHooks {
  /** A model call ran `size` inputs (texts or pairs) gathered from the queue, in `ms`. */
  onBatch?: (model: ModelName, size: number, ms: number) => void;
  /** Inputs waiting for a model. */
  onQueueDepth?: (model: ModelName, depth: number) => void;
  /** A request was refused because the model's queue was full. */
  onRejected?: (model: ModelName) => void;
  onStage?: (stage: Stage, ms: number) => void;
}

export type ModelName = 'encoder' | 'reranker';

export interface BatchOptions {
  /** Most inputs per model call. */
  maxBatch: number;
  /** Longest wait to fill a batch; 0 sends what is queued at once. */
  maxWaitMs: number;
}

export interface ServiceOptions {
  index: string;
  /** Encoder name or directory; default: the model the index was built with. */
  model?: string | undefined;
  /** Cross-encoder name or directory; undefined: the default one when present; false: none. */
  reranker?: string | false | undefined;
  /** Dynamic batching of the encoder's inputs across concurrent requests. */
  batch?: BatchOptions | undefined;
  mmap?: boolean | undefined;
  /**
   * ORT's idle intra-op threads spin-wait (ORT's default; `paramine serve` turns it off). The encoder and
   * the cross-encoder each have their own threads on the same cores, so spinning ones slow the other
   * model's run: rerank throughput 12 → 19 req/s on 2 cores without spinning (BENCHMARKS.md).
   */
  spinning?: boolean | undefined;
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
  /** The encoder behind its batcher: what every query goes through. */
  encoder: Embedder;
  /** The cross-encoder, when one is loaded. */
  reranker: PairScorer | undefined;
  /** The index directory and its manifest, as `GET /v1/index` shows them. */
  indexInfo(): { dir: string; manifest: ShardedIndex['manifest'] };
  /** What mining jobs run against. */
  jobContext(dataDir?: string): JobContext;
  /** A job manager over this service with its store in `dir`; closed with the service. */
  openJobs(options: JobsOptions): Jobs;
  /** Named readiness checks; all true means the service answers queries. */
  readiness(): Promise<Record<string, boolean>>;
  /** Closes the job managers opened here (pausing running jobs), then the models, index and store. */
  close(): Promise<void>;
}

class Closers {
  readonly #list: Array<() => Promise<void>> = [];
  add(close: () => Promise<void>): void {
    this.#list.push(close);
  }
  async closeAll(): Promise<void> {
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

async function open(o: ServiceOptions, closers: Closers): Promise<Service> {
  const manifest = await readManifest(o.index);
  const encoder = await Encoder.open(resolveModelDir(o.model ?? manifest.model.id), { spinning: o.spinning });
  closers.add(() => encoder.close());
  const index = await ShardedIndex.open(o.index, {
    model: { id: encoder.modelId, sha256: encoder.onnxSha256 },
    dim: encoder.dim,
    mmap: o.mmap ?? false,
  });
  closers.add(() => index.close());
  const store = SentenceStore.open(join(o.index, 'store'), { readOnly: true });
  closers.add(() => store.close());
  const vectors = await VectorFile.open(o.index);
  if (vectors) closers.add(() => vectors.close());
  const groups = GroupTables.open(join(o.index, GROUPS_DIR), groupTableIdentity(manifest));
  if (groups) closers.add(() => groups.close());
  const reranker = await openReranker(o, closers);
  const hooks = o.hooks ?? {};
  const batched = new BatchingEncoder(encoder, {
    maxBatch: o.batch?.maxBatch ?? 32,
    maxWaitMs: o.batch?.maxWaitMs ?? 2,
    onBatch: (n, ms) => hooks.onBatch?.('encoder', n, ms),
    onQueueDepth: (n) => hooks.onQueueDepth?.('encoder', n),
  });
  const core = new SearchCore({ encoder: batched, index, store, reranker, onStage: hooks.onStage });
  let closed = false;
  closers.add(async () => {
    closed = true;
  });
  const jobContext = (dataDir?: string): JobContext => ({
    core,
    encoder: batched,
    ann: index,
    store,
    vectors,
    groups,
    index: {
      name: basename(resolve(o.index)),
      // A rebuilt index under the same name is another index: its jobs do not resume on it.
      identity: `${manifest.model.sha256}:${manifest.createdAt}:${index.ntotal}`,
      ntotal: index.ntotal,
    },
    dataDir,
  });
  const jobManagers: Jobs[] = [];
  const service: Service = {
    core,
    store,
    index,
    vectors,
    encoder: batched,
    reranker,
    indexInfo: () => ({ dir: o.index, manifest: index.manifest }),
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
    readiness: async () => ({ index: !closed, models: !closed }),
    async close() {
      // Running jobs pause at a batch boundary (committed) before anything they use goes away.
      for (const j of jobManagers.splice(0)) {
        await j.manager.close();
        await j.store.close();
      }
      await closers.closeAll();
    },
  };
  return service;
}

async function openReranker(o: ServiceOptions, closers: Closers): Promise<CrossEncoder | undefined> {
  const name = o.reranker === undefined ? defaultReranker() : o.reranker;
  if (name === false || name === undefined) return undefined;
  const reranker = await CrossEncoder.open(resolveModelDir(name, 'reranker'), { spinning: o.spinning });
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

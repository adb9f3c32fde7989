/**
 * Opens everything a front end needs over one index: the sentence store, the shards (checked against
 * the encoder's sha256 and dimension), the encoder behind the dynamic batcher, and the cross-encoder.
 */
import { basename, join, resolve } from 'node:path';
import { Encoder } from '../encode/index.js';
import { readManifest, ShardedIndex, VectorFile } from '../index/index.js';
import type { JobContext } from '../jobs/index.js';
import { resolveModelDir } from '../models/resolve.js';
import { CrossEncoder } from '../rerank/index.js';
import { BatchingEncoder } from '../search/batcher.js';
import { SearchCore } from '../search/core.js';
import { SentenceStore } from '../store/index.js';
import { Metrics } from './metrics.js';

export const DEFAULT_RERANKER = 'paramine-paraphrase-minilm';

export interface OpenServiceOptions {
  index: string;
  /** Encoder name or directory; default: the model the index was built with. */
  model?: string | undefined;
  /** Cross-encoder name or directory; undefined: the default one when present; false: none. */
  reranker?: string | false | undefined;
  batch?: { maxBatch: number; maxWaitMs: number } | undefined;
  /** Map the shards' inverted lists; default 'auto' (mapped above a quarter of RAM, see ShardedIndex). */
  mmap?: boolean | 'auto' | undefined;
  /**
   * ORT's idle intra-op threads spin-wait (ORT's default; `paramine serve` turns it off). The encoder and
   * the cross-encoder each have their own threads on the same cores, so spinning ones slow the other
   * model's run: rerank throughput 12 → 19 req/s on 2 cores without spinning (BENCHMARKS.md).
   */
  spinning?: boolean | undefined;
}

export interface OpenService {
  core: SearchCore;
  store: SentenceStore;
  index: ShardedIndex;
  /** The embeddings the indexer kept (jobs query with them instead of re-encoding), if any. */
  vectors: VectorFile | undefined;
  metrics: Metrics;
  /** What mining jobs run against. */
  jobContext(dataDir?: string): JobContext;
  close(): Promise<void>;
}

export async function openService(o: OpenServiceOptions): Promise<OpenService> {
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const c of closers.reverse()) await c();
  };
  try {
    const manifest = await readManifest(o.index);
    const encoder = await Encoder.open(resolveModelDir(o.model ?? manifest.model.id), {
      spinning: o.spinning,
    });
    closers.push(() => encoder.close());
    const index = await ShardedIndex.open(o.index, {
      model: { id: encoder.modelId, sha256: encoder.onnxSha256 },
      dim: encoder.dim,
      mmap: o.mmap ?? 'auto',
    });
    closers.push(() => index.close());
    const store = SentenceStore.open(join(o.index, 'store'), { readOnly: true });
    closers.push(() => store.close());
    const vectors = await VectorFile.open(o.index);
    if (vectors) closers.push(() => vectors.close());
    let reranker: CrossEncoder | undefined;
    const rerankerName = o.reranker === undefined ? defaultReranker() : o.reranker;
    if (rerankerName !== false && rerankerName !== undefined) {
      reranker = await CrossEncoder.open(resolveModelDir(rerankerName, 'reranker'), { spinning: o.spinning });
      closers.push(() => (reranker as CrossEncoder).close());
    }
    const metrics = new Metrics();
    const batcher = new BatchingEncoder(encoder, {
      maxBatch: o.batch?.maxBatch ?? 32,
      maxWaitMs: o.batch?.maxWaitMs ?? 2,
      onBatch: (n) => metrics.batchSize.observe(n),
      onQueueDepth: (n) => metrics.queueDepth.set(n),
    });
    const core = new SearchCore({
      encoder: batcher,
      index,
      store,
      reranker,
      onStage: (stage, ms) => metrics.stageSeconds.observe({ stage }, ms / 1000),
    });
    const jobContext = (dataDir?: string): JobContext => ({
      core,
      store,
      vectors,
      index: {
        name: basename(resolve(o.index)),
        // A rebuilt index under the same name is another index: its jobs do not resume on it.
        identity: `${manifest.model.sha256}:${manifest.createdAt}:${index.ntotal}`,
        ntotal: index.ntotal,
      },
      dataDir,
    });
    return { core, store, index, vectors, metrics, jobContext, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** The committed paraphrase cross-encoder, when this checkout has it. */
function defaultReranker(): string | undefined {
  try {
    return resolveModelDir(DEFAULT_RERANKER, 'reranker');
  } catch {
    return undefined;
  }
}

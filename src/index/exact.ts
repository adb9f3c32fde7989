/**
 * Exact nearest neighbours of a few queries over a whole collection, by streaming brute force: the
 * stored vectors are read `batchRows` at a time into a FAISS Flat index (searched off the event loop),
 * and each batch's top k is merged into the running top k. Memory: one batch, whatever the collection.
 * The ground truth the tuner (tune.ts) measures recall against.
 */
import { createIndex, type Metric } from '../native/index.js';
import { type VectorSource, withoutIds } from './source.js';
import { mergeTopK } from './topk.js';

export interface ExactOptions {
  /** Rows read and searched at once (default: 32,768 -> 50 MB of float32 at d = 384). */
  batchRows?: number;
  /** Rows that are no longer in the collection (deleted sentences): never a neighbour. */
  skipIds?: ReadonlySet<number> | undefined;
  /** Each query's own id: left out of its neighbours (queries drawn from the collection). */
  excludeIds?: readonly number[];
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

/** Top-k ids (nq x k, best first; -1 where the collection has fewer) of each query row over `source`. */
export async function exactTopK(
  source: VectorSource,
  queries: Float32Array,
  k: number,
  metric: Metric,
  options: ExactOptions = {},
): Promise<BigInt64Array> {
  const { dim, count } = source;
  const nq = queries.length / dim;
  const exclude = options.excludeIds;
  const fetch = k + (exclude ? 1 : 0);
  const batch = Math.max(1, options.batchRows ?? 32_768);
  let best: { distances: Float32Array; ids: BigInt64Array } | undefined;
  for (let first = 0; first < count; first += batch) {
    options.signal?.throwIfAborted();
    const rows = Math.min(batch, count - first);
    const all = new BigInt64Array(rows);
    for (let i = 0; i < rows; i++) all[i] = BigInt(first + i);
    const [vectors, ids] = withoutIds(await source.read(first, rows), all, options.skipIds);
    const flat = createIndex('Flat', dim, metric);
    try {
      if (ids.length > 0) await flat.add(vectors, ids);
      const width = Math.min(fetch, Math.max(1, ids.length));
      const part = await flat.search(queries, width);
      const padded = part.ids.length === nq * fetch ? part : pad(part, nq, width, fetch, metric);
      best = best === undefined ? padded : mergeTopK([best, padded], nq, fetch, metric);
    } finally {
      await flat.close();
    }
    options.onProgress?.(first + rows, count);
  }
  const out = new BigInt64Array(nq * k).fill(-1n);
  if (!best) return out;
  for (let q = 0; q < nq; q++) {
    const self = exclude ? BigInt(exclude[q] ?? -1) : -2n;
    let j = 0;
    for (let r = 0; r < fetch && j < k; r++) {
      const id = best.ids[q * fetch + r] as bigint;
      if (id !== self && id >= 0n) out[q * k + j++] = id;
    }
  }
  return out;
}

/** Rows of `width` hits widened to `to` with empty slots (a last batch smaller than k). */
function pad(
  r: { distances: Float32Array; ids: BigInt64Array },
  nq: number,
  width: number,
  to: number,
  metric: Metric,
): { distances: Float32Array; ids: BigInt64Array } {
  const distances = new Float32Array(nq * to).fill(
    metric === 'ip' ? -3.4028234663852886e38 : 3.4028234663852886e38,
  );
  const ids = new BigInt64Array(nq * to).fill(-1n);
  for (let q = 0; q < nq; q++) {
    distances.set(r.distances.subarray(q * width, (q + 1) * width), q * to);
    ids.set(r.ids.subarray(q * width, (q + 1) * width), q * to);
  }
  return { distances, ids };
}

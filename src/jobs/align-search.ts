/**
 * Each document's nearest documents, through the same index machinery as sentences: chooseFactory picks
 * the index for the number of documents (Flat up to 100k, IVF-PQ above, an HNSW quantizer from 10^6 on;
 * a RAM budget applies as to a build), trainIndex trains it on a seeded sample, and the vectors are made
 * batch by batch from the caller's rows (tfidf's projected vectors are never all held as floats; the mean
 * method's are its input). Memory: the index
 * and the n x k results (8 bytes a neighbour), whatever the number of documents; time: n log n in the IVF
 * sense, not the n^2 of a flat scan.
 */

import { setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  chooseFactory,
  DEFAULT_SEED,
  type IndexPlan,
  sampleIds,
  trainIndex,
  type VectorSource,
} from '../index/index.js';
import type { FaissIndex } from '../native/index.js';

/** Rows of document vectors: `dim` floats a document, for the given document numbers. */
export interface DocVectors {
  readonly dim: number;
  rows(docs: ArrayLike<number>): Float32Array | Promise<Float32Array>;
}

/** k neighbours per document, best first: ids are document numbers (-1: none), scores inner products. */
export interface Neighbours {
  /** The documents searched, in order: row r of ids / scores is docs[r]'s. */
  docs: Int32Array;
  k: number;
  ids: Int32Array;
  scores: Float32Array;
}

export type NearestStage = 'train' | 'add' | 'search';

export interface NearestOptions {
  /** RAM the index may take (bytes): a smaller index is chosen, as for `paramine index --max-ram`. */
  maxRamBytes?: number | undefined;
  onProgress?: ((stage: NearestStage, done: number, total: number) => void) | undefined;
}

const BATCH = 16_384;

/** The documents' index: chosen for their number, trained on a seeded sample of them, filled batch by batch. */
export class DocIndex {
  private constructor(
    readonly plan: IndexPlan,
    private readonly index: FaissIndex,
    private readonly vectors: DocVectors,
    private readonly options: NearestOptions,
  ) {}

  /** Documents 0..n-1 in an index (id = document number). */
  static async open(vectors: DocVectors, n: number, options: NearestOptions = {}): Promise<DocIndex> {
    const dim = vectors.dim;
    const plan = chooseFactory({ n, dim, metric: 'ip', maxRamBytes: options.maxRamBytes });
    const rowsOf = async (from: number, count: number) =>
      vectors.rows(Int32Array.from({ length: count }, (_, r) => from + r));
    const source: VectorSource = { count: n, dim, read: rowsOf, readIds: async (ids) => vectors.rows(ids) };
    const progress = options.onProgress;
    const sample = sampleIds(n, Math.max(plan.trainSize, 1), DEFAULT_SEED);
    const index = await trainIndex({
      plan,
      dim,
      metric: 'ip',
      source,
      sampleIds: sample,
      // k-means reports per step (assigning, each group): enough to show it moves.
      onProgress: (p) => progress?.('train', p.done, p.total),
    });
    try {
      for (let from = 0; from < n; from += BATCH) {
        const count = Math.min(BATCH, n - from);
        const ids = new BigInt64Array(count);
        for (let r = 0; r < count; r++) ids[r] = BigInt(from + r);
        await index.add(await rowsOf(from, count), ids);
        progress?.('add', from + count, n);
      }
    } catch (e) {
      await index.close();
      throw e;
    }
    return new DocIndex(plan, index, vectors, options);
  }

  /**
   * The k nearest of each of `docs` (itself left out), skipping the documents set in `exclude` (a bitmap).
   * With `rescore`, `depth` candidates are searched, re-scored by it, and the best k kept.
   */
  async neighbours(docs: Int32Array, k: number, o: NeighbourOptions = {}): Promise<Neighbours> {
    const n = docs.length;
    const kk = Math.max(0, Math.min(k, this.index.ntotal - 1));
    const depth = o.rescore === undefined ? kk : Math.max(kk, Math.min(o.depth ?? kk, this.index.ntotal - 1));
    const out: Neighbours = {
      docs,
      k: kk,
      ids: new Int32Array(n * kk).fill(-1),
      scores: new Float32Array(n * kk),
    };
    const { nprobe, efSearch, kFactor } = this.plan.search;
    const params = { nprobe, efSearch, kFactor, ...(o.exclude === undefined ? {} : { exclude: o.exclude }) };
    const searchFrom = async (from: number) => {
      const rows = docs.subarray(from, Math.min(n, from + BATCH));
      return { rows, found: await this.index.search(await this.vectors.rows(rows), depth + 1, params) };
    };
    // The next batch searches (FAISS's threads) while this one is re-scored (this thread).
    let next = kk > 0 && n > 0 ? searchFrom(0) : undefined;
    for (let from = 0; next !== undefined; from += BATCH) {
      const { rows, found } = await next;
      next = from + BATCH < n ? searchFrom(from + BATCH) : undefined;
      const batch: Neighbours = {
        docs: rows,
        k: depth,
        ids: new Int32Array(rows.length * depth).fill(-1),
        scores: new Float32Array(rows.length * depth),
      };
      keepOthers(found, depth, batch);
      if (o.rescore !== undefined) rescoreRows(batch, o.rescore);
      for (let r = 0; r < rows.length; r++) {
        out.ids.set(batch.ids.subarray(r * depth, r * depth + kk), (from + r) * kk);
        out.scores.set(batch.scores.subarray(r * depth, r * depth + kk), (from + r) * kk);
      }
      this.options.onProgress?.('search', from + rows.length, n);
      await yieldToLoop();
    }
    return out;
  }

  close(): Promise<void> {
    return this.index.close();
  }
}

export interface NeighbourOptions {
  /** Documents never returned: bit i set skips document i. */
  exclude?: Uint8Array | undefined;
  /** Exact scores of row i's candidates js into out (-1 ids skipped): candidates re-ranked by them. */
  rescore?: ((i: number, js: Int32Array, out: Float32Array) => void) | undefined;
  /** Candidates searched per document before re-scoring (default k). */
  depth?: number | undefined;
}

/** Each row's candidates re-scored and re-ordered, best first (-1 last). */
function rescoreRows(found: Neighbours, rescore: NonNullable<NeighbourOptions['rescore']>): void {
  const { docs, k, ids, scores } = found;
  const order = Array.from({ length: k }, (_, h) => h);
  const js = new Int32Array(k);
  const exact = new Float32Array(k);
  for (let r = 0; r < docs.length; r++) {
    js.set(ids.subarray(r * k, (r + 1) * k));
    exact.fill(-2);
    rescore(docs[r] as number, js, exact);
    order.sort((x, y) => (exact[y] as number) - (exact[x] as number));
    for (let h = 0; h < k; h++) {
      const from = order[h] as number;
      ids[r * k + h] = js[from] as number;
      scores[r * k + h] = js[from] === -1 ? 0 : (exact[from] as number);
    }
  }
}

/** Each row of a k+1-deep search without itself, into `out` (whose docs are the rows searched). */
function keepOthers(
  found: { ids: BigInt64Array; distances: Float32Array },
  k: number,
  out: Neighbours,
): void {
  for (let r = 0; r < out.docs.length; r++) {
    const self = out.docs[r] as number;
    let h = 0;
    for (let x = 0; x <= k && h < k; x++) {
      const hit = Number(found.ids[r * (k + 1) + x]);
      if (hit < 0 || hit === self) continue;
      out.ids[r * k + h] = hit;
      out.scores[r * k + h] = found.distances[r * (k + 1) + x] as number;
      h++;
    }
  }
}

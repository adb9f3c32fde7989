/**
 * Each document's nearest documents, through the same index machinery as sentences: chooseFactory picks
 * the index for the number of documents (Flat up to 100k, IVF-PQ above, an HNSW quantizer from 10^6 on;
 * a RAM budget applies as to a build), trainIndex trains it on a seeded sample, and the vectors are made
 * batch by batch from the caller's rows (tfidf's projected vectors are never all held as floats; the mean
 * method's are its input). Memory: the index
 * and the n x k results (8 bytes a neighbour), whatever the number of documents; time: n log n in the IVF
 * sense, not the n^2 of a flat scan.
 */

import {
  chooseFactory,
  DEFAULT_SEED,
  type IndexPlan,
  sampleIds,
  trainIndex,
  type VectorSource,
} from '../index/index.js';
import type { FaissIndex } from '../native/index.js';
import { Turns } from '../turns.js';

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

/** What each stage's progress counts: k-means reports its steps (assigning, each group), not documents. */
export const NEAREST_UNITS = { default: 'documents', train: 'k-means steps' } as const;

export interface NearestOptions {
  /** RAM the index may take (bytes): a smaller index is chosen, as for `paramine index --max-ram`. */
  maxRamBytes?: number | undefined;
  /** `readBack`: done by a run cut short, read back now (not this run's work). */
  onProgress?: ((stage: NearestStage, done: number, total: number, readBack?: boolean) => void) | undefined;
  /** Where the trained index is kept and read back from (align-checkpoint.ts). */
  checkpoint?: SearchCheckpoint | undefined;
}

/** What a run cut short left: the filled index, and each search batch's rows (align-checkpoint.ts). */
export interface SearchCheckpoint {
  index(factory: string): Promise<FaissIndex | undefined>;
  saveIndex(index: FaissIndex, factory: string): Promise<void>;
  batch(from: number, count: number, width: number): { ids: Int32Array; scores: Float32Array } | undefined;
  /** Whether batch `from` is kept, without reading it. */
  has(from: number, count: number, width: number): boolean;
  saveBatch(from: number, ids: Int32Array, scores: Float32Array): Promise<void>;
}

/** Documents a search batch holds: a checkpoint keeps one file a batch, a worker's share is whole batches. */
export const SEARCH_BATCH = 16_384;
const BATCH = SEARCH_BATCH;
/** Rows re-scored at a time, after which the event loop is let go if it is owed a turn (turns.ts). */
export const SLICE = 64;

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
    const saved = await options.checkpoint?.index(plan.factory);
    if (saved !== undefined) return new DocIndex(plan, saved, vectors, options);
    const index = await DocIndex.#build(plan, vectors, n, options);
    try {
      await options.checkpoint?.saveIndex(index, plan.factory);
    } catch (e) {
      await index.close();
      throw e;
    }
    return new DocIndex(plan, index, vectors, options);
  }

  /** Trained on a seeded sample, then filled batch by batch. */
  static async #build(
    plan: IndexPlan,
    vectors: DocVectors,
    n: number,
    options: NearestOptions,
  ): Promise<FaissIndex> {
    const dim = vectors.dim;
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
      const read = (from: number) => {
        const rows = rowsOf(from, Math.min(BATCH, n - from));
        rows.catch(() => undefined);
        return rows;
      };
      let rows = read(0);
      for (let from = 0; from < n; from += BATCH) {
        const count = Math.min(BATCH, n - from);
        const ids = new BigInt64Array(count);
        for (let r = 0; r < count; r++) ids[r] = BigInt(from + r);
        const adding = index.add(await rows, ids);
        // The next batch's vectors are made (here) while FAISS's threads add this one.
        if (from + BATCH < n) rows = read(from + BATCH);
        await adding;
        progress?.('add', from + count, n);
      }
    } catch (e) {
      await index.close();
      throw e;
    }
    return index;
  }

  /**
   * The k nearest of each of `docs` (itself left out), skipping the documents set in `exclude` (a bitmap).
   * With `rescore`, `depth` candidates are searched, re-scored by it, and the best k kept.
   */
  async neighbours(docs: Int32Array, k: number, o: NeighbourOptions = {}): Promise<Neighbours> {
    const n = docs.length;
    const kk = this.#width(k);
    const depth = o.rescore === undefined ? kk : Math.max(kk, Math.min(o.depth ?? kk, this.index.ntotal - 1));
    // A share's rows only: a worker's share of 10^6 documents holds its 131,072 rows' lists, not all n.
    const [first, last] = o.share === undefined ? [0, n] : [o.share.from, Math.min(n, o.share.to)];
    const out: Neighbours = {
      docs: docs.subarray(first, last),
      k: kk,
      ids: new Int32Array((last - first) * kk).fill(-1),
      scores: new Float32Array((last - first) * kk),
    };
    const { nprobe, efSearch } = documentProbes(this.plan.search);
    // With an exact re-scoring after it, the SQ8 refine only carries candidates to it: 2 a result, not the
    // sentence default 8 (at 10^6 documents its scalar 8-bit decode was 64% of the search's CPU).
    const kFactor =
      o.rescore === undefined ? this.plan.search.kFactor : Math.min(2, this.plan.search.kFactor);
    const params = { nprobe, efSearch, kFactor, ...(o.exclude === undefined ? {} : { exclude: o.exclude }) };
    const searchFrom = async (from: number) => {
      const rows = docs.subarray(from, Math.min(n, from + BATCH));
      return { rows, found: await this.index.search(await this.vectors.rows(rows), depth + 1, params) };
    };
    // Batches a run cut short already did are read back; the others are searched.
    const checkpoint = o.checkpoint;
    const todo: number[] = [];
    let done = 0;
    for (let from = first; kk > 0 && from < last; from += BATCH) {
      const count = Math.min(BATCH, n - from);
      const saved = checkpoint?.batch(from, count, kk);
      if (saved === undefined) todo.push(from);
      else {
        out.ids.set(saved.ids, (from - first) * kk);
        out.scores.set(saved.scores, (from - first) * kk);
        done += count;
      }
    }
    if (done > 0) this.options.onProgress?.('search', done, n, true);
    // The next batch searches (FAISS's threads) while this one is re-scored (this thread).
    const turns = new Turns();
    let next = todo.length > 0 ? searchFrom(todo[0] as number) : undefined;
    for (let t = 0; next !== undefined; t++) {
      const from = todo[t] as number;
      const { rows, found } = await next;
      next = t + 1 < todo.length ? searchFrom(todo[t + 1] as number) : undefined;
      const width = depth + (o.more?.depth ?? 0);
      const batch: Neighbours = {
        docs: rows,
        k: width,
        ids: new Int32Array(rows.length * width).fill(-1),
        scores: new Float32Array(rows.length * width),
      };
      // In slices, letting the event loop go when it is owed a turn: a service's searches (a job aligns beside
      // them) and a worker's lock renewals (queue/align.ts) wait for nothing longer than TURN_MS and a slice.
      for (let at = 0; at < rows.length; at += SLICE) {
        const end = Math.min(rows.length, at + SLICE);
        const part = rowsOf(batch, at, end);
        const w = depth + 1;
        keepOthers(
          { ids: found.ids.subarray(at * w, end * w), distances: found.distances.subarray(at * w, end * w) },
          depth,
          part,
        );
        if (o.more !== undefined) addMore(part, depth, o.more, o.exclude);
        if (o.rescore !== undefined) rescoreRows(part, o.rescore);
        await turns.take();
      }
      for (let r = 0; r < rows.length; r++) {
        out.ids.set(batch.ids.subarray(r * width, r * width + kk), (from - first + r) * kk);
        out.scores.set(batch.scores.subarray(r * width, r * width + kk), (from - first + r) * kk);
      }
      const cells = [(from - first) * kk, (from - first + rows.length) * kk] as const;
      await checkpoint?.saveBatch(from, out.ids.subarray(...cells), out.scores.subarray(...cells));
      done += rows.length;
      this.options.onProgress?.('search', done, n);
      await turns.take();
    }
    return out;
  }

  /** Whether a search of all documents for k neighbours kept its batch starting at `from` in `checkpoint`. */
  searched(checkpoint: SearchCheckpoint, from: number, k: number): boolean {
    return checkpoint.has(from, Math.min(BATCH, this.index.ntotal - from), this.#width(k));
  }

  /** Neighbours a document can have: k, or every other document when there are fewer. */
  #width(k: number): number {
    return Math.max(0, Math.min(k, this.index.ntotal - 1));
  }

  close(): Promise<void> {
    return this.index.close();
  }
}

/**
 * The lists probed for documents, as a multiple of the sentence plan's nprobe: with an HNSW coarse quantizer
 * (10^6 documents on), twice its nprobe within the same graph walk (efSearch). Documents hold no clusters for the lists to follow
 * (align-rare.ts): at 10^6 lab documents twice found 0.913 of the planted partners against 0.892 for ~15% more
 * search time. With the joint vectors and the rare lists of 64 keys a partner from either side was found for
 * 0.966; three times the lists made it 0.971 but took the full alignment past 30 minutes on 2 cores (31 against
 * 27; docs/benchmarks/documents.md). Part of an alignment's checkpoint fingerprint: another factor's lists differ.
 */
export const PROBE_FACTOR = 2;

/** nprobe and efSearch for documents (PROBE_FACTOR). */
function documentProbes(search: IndexPlan['search']): { nprobe: number; efSearch?: number } {
  if (search.efSearch === undefined) return { nprobe: search.nprobe };
  const nprobe = PROBE_FACTOR * search.nprobe;
  return { nprobe, efSearch: Math.max(search.efSearch, nprobe) };
}

export interface NeighbourOptions {
  /** Documents never returned: bit i set skips document i. */
  exclude?: Uint8Array | undefined;
  /** Exact scores of row i's candidates js into out (-1 ids skipped): candidates re-ranked by them. */
  rescore?: ((i: number, js: Int32Array, out: Float32Array) => void) | undefined;
  /** Candidates searched per document before re-scoring (default k). */
  depth?: number | undefined;
  /** Candidates from elsewhere (align-rare.ts), up to `depth` a document, re-scored with the index's. */
  more?: MoreCandidates | undefined;
  /** Batches done by a run cut short, and where this run's are kept (the first search of all documents). */
  checkpoint?: SearchCheckpoint | undefined;
  /**
   * Only the rows [from, to) (`from` a multiple of SEARCH_BATCH): a worker's share of a distributed
   * alignment, kept in the checkpoint; the answer holds those rows only (`docs` is their slice).
   */
  share?: { from: number; to: number } | undefined;
}

export interface MoreCandidates {
  readonly depth: number;
  /** Up to out.length candidates of document i into out; returns how many. */
  candidates(i: number, out: Int32Array): number;
}

/** Rows [from, to) of `found`: views, not copies. */
function rowsOf(found: Neighbours, from: number, to: number): Neighbours {
  const { docs, k, ids, scores } = found;
  return {
    docs: docs.subarray(from, to),
    k,
    ids: ids.subarray(from * k, to * k),
    scores: scores.subarray(from * k, to * k),
  };
}

/** Each row's `more` candidates after its `filled` searched ones: none twice, none excluded, not itself. */
function addMore(batch: Neighbours, filled: number, more: MoreCandidates, exclude?: Uint8Array): void {
  const { docs, k, ids } = batch;
  const extra = new Int32Array(more.depth);
  for (let r = 0; r < docs.length; r++) {
    const i = docs[r] as number;
    const row = ids.subarray(r * k, (r + 1) * k);
    let h = row.indexOf(-1);
    if (h < 0 || h > filled) h = filled;
    const m = more.candidates(i, extra);
    for (let x = 0; x < m && h < k; x++) {
      const j = extra[x] as number;
      if (j === i || (exclude !== undefined && ((exclude[j >> 3] as number) >> (j & 7)) & 1)) continue;
      if (!row.subarray(0, h).includes(j)) row[h++] = j;
    }
  }
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

/** Each row of a k+1-deep search without itself, into the first k of `out`'s columns (its docs: the rows searched). */
function keepOthers(
  found: { ids: BigInt64Array; distances: Float32Array },
  k: number,
  out: Neighbours,
): void {
  const w = out.k;
  for (let r = 0; r < out.docs.length; r++) {
    const self = out.docs[r] as number;
    let h = 0;
    for (let x = 0; x <= k && h < k; x++) {
      const hit = Number(found.ids[r * (k + 1) + x]);
      if (hit < 0 || hit === self) continue;
      out.ids[r * w + h] = hit;
      out.scores[r * w + h] = found.distances[r * (k + 1) + x] as number;
      h++;
    }
  }
}

/**
 * Each found pair offered to the other side's list as well (scores are symmetric: exact cosines or inner
 * products). An IVF search misses a partner from one side more often than from both: documents hold no
 * cluster structure, so the lists probed for i need not hold j even when those probed for j hold i.
 * Documents for which `keep` fails neither give nor receive entries. Returns the entries added.
 */
export function addReverse(found: Neighbours, keep: (i: number) => boolean = () => true): number {
  const { docs, k, ids, scores } = found;
  const rowOf = rowIndex(docs);
  let added = 0;
  for (let r = 0; r < docs.length; r++) {
    const i = docs[r] as number;
    if (!keep(i)) continue;
    for (let h = 0; h < k; h++) {
      const j = ids[r * k + h] as number;
      if (j < 0) break;
      const row = rowOf[j] as number;
      if (row >= 0 && keep(j) && insertSorted(found, row, i, scores[r * k + h] as number)) added++;
    }
  }
  return added;
}

/** Each document's row in `docs` (-1: none), indexed by document number. */
export function rowIndex(docs: Int32Array): Int32Array {
  const rowOf = new Int32Array(docs.reduce((m, d) => Math.max(m, d + 1), 0)).fill(-1);
  docs.forEach((d, r) => {
    rowOf[d] = r;
  });
  return rowOf;
}

/** i at its place in row's best-first list (the worst entry falls off); false when present or not better. */
export function insertSorted(found: Neighbours, row: number, i: number, score: number): boolean {
  const { k, ids, scores } = found;
  const base = row * k;
  let at = -1;
  for (let h = 0; h < k; h++) {
    const j = ids[base + h] as number;
    if (j === i) return false;
    if (at < 0 && (j === -1 || (scores[base + h] as number) < score)) at = h;
  }
  if (at < 0) return false;
  ids.copyWithin(base + at + 1, base + at, base + k - 1);
  scores.copyWithin(base + at + 1, base + at, base + k - 1);
  ids[base + at] = i;
  scores[base + at] = score;
  return true;
}

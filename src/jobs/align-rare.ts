/**
 * Candidates that share rare n-grams: a lexical pass beside the projection's ANN search. Documents hold no
 * cluster structure for IVF lists to follow (the projection of a TF-IDF row is near isotropic), so at 10^6
 * documents an IVF finds 0.58 of the partners a flat scan of the same projection finds (0.98), and 0.87 at
 * 16x the lists probed (docs/benchmarks/documents.md). Partners share rare words, though, and a word's
 * rare character grams with them: each document's `keys` rarest buckets (document frequency 2..maxDf) go
 * into inverted lists; a document's candidates are those that chose one of its keys too, ranked by the
 * summed idf^2 of the keys they share. Both sources are scored exactly afterwards, so this pass only has
 * to put the partner in the list. Memory: 4 bytes a key (a row's keys are picked again when it is searched);
 * time: the lists' lengths, bounded by maxDf.
 */
import { Turns } from '../turns.js';
import { BUCKETS, type DocGrams } from './align-grams.js';

export interface RareOptions {
  /** Rarest buckets a document is filed under. */
  keys: number;
  /** Buckets in more documents than this are not keys (their lists would cost more than they tell). */
  maxDf: number;
}

/**
 * 64 keys, lists of at most 1,000 documents, 16 candidates. At 10^6 lab documents 32 keys and lists of 500 lifted
 * the partners found with the IVF's (and the reverse edges) from 0.73 to 0.90 for ~2 min; beside the joint
 * search (hybrid), 64 and 1,000 took a planted partner from either side from 0.955 to 0.966, for ~0.1 ms a
 * document and 12 s to build (docs/benchmarks/documents.md).
 */
export const RARE_DEFAULTS: RareOptions = { keys: 64, maxDf: 1000 };

/** Candidates a document takes from the rare lists. */
export const RARE_DEPTH = 16;

const NONE = 0xffffffff;

export class RareGrams {
  readonly #acc: Float32Array;
  #touched: Int32Array = new Int32Array(4096);
  #heap: Int32Array = new Int32Array(64);

  /** One row's keys (candidates()'s scratch). */
  readonly #keys: Uint32Array;

  private constructor(
    private readonly grams: DocGrams,
    private readonly o: RareOptions,
    /** Bucket b's documents: docs[offsets[b] .. offsets[b + 1]]. */
    private readonly offsets: Uint32Array,
    private readonly docs: Int32Array,
  ) {
    this.#acc = new Float32Array(grams.count);
    this.#keys = new Uint32Array(o.keys);
  }

  /** ~22 s at 10^6 documents: in turns. */
  static async build(
    grams: DocGrams,
    o: RareOptions = RARE_DEFAULTS,
    turns = new Turns(),
  ): Promise<RareGrams> {
    const n = grams.count;
    const t = o.keys;
    // Each row's keys, held while the lists are filled only: candidates() picks them again (tens of
    // microseconds a document), so the n x keys table is not beside the index during the search.
    const keys = new Uint32Array(n * t).fill(NONE);
    const buckets = BUCKETS;
    const offsets = new Uint32Array(buckets + 1);
    for (let i = 0; i < n; i++) {
      const row = keys.subarray(i * t, (i + 1) * t);
      const m = grams.rarest(i, o.maxDf, row);
      for (let x = 0; x < m; x++) {
        const b = (row[x] as number) + 1;
        offsets[b] = (offsets[b] as number) + 1;
      }
      if (turns.due) await turns.pass();
    }
    for (let b = 0; b < buckets; b++) offsets[b + 1] = (offsets[b + 1] as number) + (offsets[b] as number);
    const fill = offsets.slice(0, buckets);
    const docs = new Int32Array(offsets[buckets] as number);
    for (let i = 0; i < n; i++) {
      for (let x = i * t; x < (i + 1) * t; x++) {
        const b = keys[x] as number;
        if (b === NONE) break;
        docs[fill[b] as number] = i;
        fill[b] = (fill[b] as number) + 1;
      }
      if (turns.due) await turns.pass();
    }
    return new RareGrams(grams, o, offsets, docs);
  }

  /** Up to out.length candidates of document i, the most shared rare weight first; returns how many. */
  candidates(i: number, out: Int32Array): number {
    const acc = this.#acc;
    let touched = 0;
    const keys = this.#keys;
    const m = this.grams.rarest(i, this.o.maxDf, keys);
    for (let x = 0; x < m; x++) {
      const b = keys[x] as number;
      const w = this.grams.idfOf(b) ** 2;
      const end = this.offsets[b + 1] as number;
      for (let p = this.offsets[b] as number; p < end; p++) {
        const j = this.docs[p] as number;
        if (j === i) continue;
        if (acc[j] === 0) {
          if (touched === this.#touched.length) this.#touched = grow(this.#touched);
          this.#touched[touched++] = j;
        }
        acc[j] = (acc[j] as number) + w;
      }
    }
    const kept = this.#best(touched, out.length);
    for (let x = 0; x < kept; x++) out[x] = this.#heap[x] as number;
    for (let x = 0; x < touched; x++) acc[this.#touched[x] as number] = 0;
    return kept;
  }

  /** The `limit` touched documents of highest weight into #heap (a min-heap on weight), best first. */
  #best(touched: number, limit: number): number {
    if (this.#heap.length < limit) this.#heap = new Int32Array(limit);
    const heap = this.#heap;
    const acc = this.#acc;
    const w = (x: number) => acc[heap[x] as number] as number;
    let size = 0;
    const down = (from: number) => {
      let at = from;
      for (;;) {
        const l = 2 * at + 1;
        const r = l + 1;
        let low = at;
        if (l < size && w(l) < w(low)) low = l;
        if (r < size && w(r) < w(low)) low = r;
        if (low === at) return;
        [heap[at], heap[low]] = [heap[low] as number, heap[at] as number];
        at = low;
      }
    };
    for (let x = 0; x < touched; x++) {
      const j = this.#touched[x] as number;
      if (size < limit) {
        let at = size++;
        heap[at] = j;
        while (at > 0 && w((at - 1) >> 1) > w(at)) {
          const up = (at - 1) >> 1;
          [heap[at], heap[up]] = [heap[up] as number, heap[at] as number];
          at = up;
        }
      } else if ((acc[j] as number) > w(0)) {
        heap[0] = j;
        down(0);
      }
    }
    // Heap order to best first: pop the minimum to the end, repeatedly.
    const kept = size;
    while (size > 1) {
      const last = size - 1;
      [heap[0], heap[last]] = [heap[last] as number, heap[0] as number];
      size--;
      down(0);
    }
    return kept;
  }
}

function grow(a: Int32Array): Int32Array {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

/**
 * Document TF-IDF at a corpus's scale, exact up to hashing: each document's character 2-4-grams within
 * word boundaries (sklearn's char_wb on normalize()d, lower-cased text, as charngrams.ts) hashed into 2^22
 * buckets, counted as one sorted packed u32 a bucket (22 bits of bucket, 10 of count) and kept compressed
 * (align-gram-rows.ts: ~2.5 bytes a distinct gram, ~1.5 KB a document of a few sentences, where a dense
 * 4,096-float row took 16 KB). idf is sklearn's smooth idf over the buckets' document frequencies, and
 * cosine(i, j) is the exact dot product of the two L2-normalized rows.
 *
 * `project` maps a row to `dim` floats by signed feature hashing (Weinberger et al. 2009): an unbiased
 * estimate of the inner product, what the ANN index searches to find candidates, which cosines() then
 * scores exactly (docs/documents.md has the measured recall of both).
 */
import { prepare, resolveCharNgramOptions } from '../text/charngrams.js';
import { Turns } from '../turns.js';
import { FILTER_BITS, FILTER_MASK, GramRows, type SharedGramRows } from './align-gram-rows.js';

const BITS = 22;
/** Hashed n-gram buckets (2^22): the rows' key space, and the rare lists' (align-rare.ts). */
export const BUCKETS = 1 << BITS;
const COUNT_BITS = 32 - BITS;
const COUNT_MAX = (1 << COUNT_BITS) - 1;
const COUNT_MASK = COUNT_MAX;
const OPTIONS = resolveCharNgramOptions({});
const SPACE = 32;

/** murmur3's finalizer: spreads the FNV state over all 32 bits. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** One document's distinct buckets and counts (open addressing, reused across documents). */
class GramCounter {
  #keys = new Int32Array(4096);
  #counts = new Int32Array(4096);
  #used = new Int32Array(4096);
  #n = 0;
  #cps = new Int32Array(1024);

  /** The packed, sorted (bucket << 10 | count) entries of `text`. */
  count(text: string): Uint32Array {
    const s = prepare(text, OPTIONS);
    this.#reserve(3 * s.length + 8);
    this.#n = 0;
    // Each space-separated word padded to " word ", as sklearn's _char_wb_ngrams.
    let len = 0;
    const flush = () => {
      if (len > 0) this.#word(len + 1);
      len = 0;
    };
    const cps = this.#codePoints(s.length + 2);
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
        c = s.codePointAt(i) as number;
        i++;
      }
      if (c === SPACE) flush();
      else cps[++len] = c;
    }
    flush();
    const out = new Uint32Array(this.#n);
    for (let u = 0; u < this.#n; u++) {
      const slot = this.#used[u] as number;
      const bucket = (this.#keys[slot] as number) - 1;
      out[u] = ((bucket << COUNT_BITS) | Math.min(this.#counts[slot] as number, COUNT_MAX)) >>> 0;
      this.#keys[slot] = 0;
      this.#counts[slot] = 0;
    }
    return out.sort();
  }

  #codePoints(n: number): Int32Array {
    if (this.#cps.length < n + 2) this.#cps = new Int32Array(2 * n + 2);
    this.#cps[0] = SPACE;
    return this.#cps;
  }

  /** The grams of the padded word cps[0..last] (cps[last] is set to the closing space here). */
  #word(last: number): void {
    const cps = this.#cps;
    cps[last] = SPACE;
    const padded = last + 1;
    for (let i = 0; i < padded; i++) {
      const top = Math.min(OPTIONS.maxN, padded - i);
      let h = 0x811c9dc5;
      for (let n = 1; n <= top; n++) {
        h = Math.imul(h ^ (cps[i + n - 1] as number), 0x01000193);
        if (n >= OPTIONS.minN) this.#add(fmix(h) >>> (32 - BITS));
      }
    }
  }

  #add(bucket: number): void {
    const key = bucket + 1;
    const mask = this.#keys.length - 1;
    let slot = Math.imul(key, 0x9e3779b1) >>> 0;
    slot &= mask;
    for (;;) {
      const k = this.#keys[slot] as number;
      if (k === key) break;
      if (k === 0) {
        this.#keys[slot] = key;
        this.#used[this.#n++] = slot;
        break;
      }
      slot = (slot + 1) & mask;
    }
    this.#counts[slot] = (this.#counts[slot] as number) + 1;
  }

  #reserve(grams: number): void {
    let cap = this.#keys.length;
    if (cap >= 2 * grams) return;
    while (cap < 2 * grams) cap *= 2;
    this.#keys = new Int32Array(cap);
    this.#counts = new Int32Array(cap);
    this.#used = new Int32Array(cap);
  }
}

/** Some documents' packed gram entries, one after another: document d's end at ends[d]. */
export interface CountedGrams {
  entries: Uint32Array<ArrayBuffer>;
  ends: Int32Array<ArrayBuffer>;
}

let counter: GramCounter | undefined;

/** The texts' gram entries, as DocGrams.add counts them (a worker thread counts them, align-grams-worker.ts). */
export function countGrams(texts: readonly string[]): CountedGrams {
  counter ??= new GramCounter();
  const rows = texts.map((text) => (counter as GramCounter).count(text));
  const ends = new Int32Array(rows.length);
  let end = 0;
  rows.forEach((row, d) => {
    end += row.length;
    ends[d] = end;
  });
  const entries = new Uint32Array(end);
  rows.forEach((row, d) => {
    entries.set(row, (ends[d] as number) - row.length);
  });
  return { entries, ends };
}

/** Finished TF-IDF rows as another thread reads them (DocGrams.read): all in shared memory. */
export interface SharedDocGrams {
  rows: SharedGramRows;
  idf: Float32Array;
  invNorm: Float32Array;
}

/** `n` floats in shared memory (a worker thread reads them in place). */
const sharedFloats = (n: number) => new Float32Array(new SharedArrayBuffer(4 * n));

/** The documents' hashed gram counts, then (after finish) their TF-IDF rows. */
export class DocGrams {
  #rows = new GramRows(COUNT_BITS);
  readonly #df = new Uint32Array(BUCKETS);
  readonly #counter = new GramCounter();
  #idf: Float32Array | undefined;
  #invNorm: Float32Array | undefined;
  /** cosines()' dense table of one row's weights (16 MB, made on first use, left all zero between calls). */
  #scatter: Float32Array | undefined;
  /** The table's entries that may be set: a bit for each value of a bucket's low FILTER_BITS. */
  #present = new Int32Array((1 << FILTER_BITS) >>> 5);
  /** rarest()'s scratch: (df, bucket) keys of one row. */
  #keyed = new Float64Array(1024);
  /** A decoded row (grown to the longest row). */
  #decoded = new Uint32Array(0);

  get count(): number {
    return this.#rows.count;
  }

  /** Adds the next document (row = its order of addition). */
  add(text: string): void {
    this.addCounted(this.#counter.count(text));
  }

  /** Adds the next document as countGrams() counted it: its packed entries. */
  addCounted(entries: Uint32Array): void {
    if (this.#idf !== undefined) throw new Error('DocGrams: add after finish');
    this.#rows.add(entries);
    for (const e of entries) this.#df[e >>> COUNT_BITS] = (this.#df[e >>> COUNT_BITS] as number) + 1;
  }

  /** idf from the document frequencies, and each row's norm (~18 s at 10^6 documents: in turns). */
  async finish(turns = new Turns()): Promise<void> {
    const idf = sharedFloats(BUCKETS);
    const n = this.#rows.count;
    for (let b = 0; b < BUCKETS; b++) idf[b] = Math.log((1 + n) / (1 + (this.#df[b] as number))) + 1;
    const inv = sharedFloats(n);
    for (let i = 0; i < n; i++) {
      const row = this.#row(i);
      let ss = 0;
      for (const e of row) {
        const w = (e & COUNT_MASK) * (idf[e >>> COUNT_BITS] as number);
        ss += w * w;
      }
      inv[i] = ss > 0 ? 1 / Math.sqrt(ss) : 0;
      if (turns.due) await turns.pass();
    }
    // Set together at the end: a finished DocGrams has both.
    this.#idf = idf;
    this.#invNorm = inv;
  }

  /** The finished rows for another thread (read()), nothing copied but the rows' places. */
  share(): SharedDocGrams {
    return { rows: this.#rows.share(), idf: this.#ready(), invNorm: this.#invNorm as Float32Array };
  }

  /** Finished rows another thread shared (share()): cosines() and the rest, never add(). */
  static read(s: SharedDocGrams): DocGrams {
    const grams = new DocGrams();
    grams.#rows = GramRows.read(s.rows);
    grams.#idf = s.idf;
    grams.#invNorm = s.invNorm;
    return grams;
  }

  /** The exact TF-IDF cosine of rows i and j. */
  cosine(i: number, j: number): number {
    const out = new Float32Array(1);
    this.cosines(i, [j], out);
    return out[0] as number;
  }

  /**
   * The exact TF-IDF cosine of row i with every j of `js`, into `out` (-1 entries skipped): row i's weights
   * scattered into a dense table once, each candidate's entries looked up in it, ~3x faster than merging
   * the two sorted rows per pair. The alignment scores with GramScorer (src/native/gram_scorer.cc), the same
   * floats in C++: this is its reference.
   */
  cosines(i: number, js: ArrayLike<number>, out: Float32Array): void {
    const idf = this.#ready();
    const inv = this.#invNorm as Float32Array;
    if (this.#scatter === undefined) this.#scatter = new Float32Array(BUCKETS);
    const table = this.#scatter;
    const row = this.#row(i);
    // idf squared goes into the table, so a candidate's entries need one lookup each, not two.
    const present = this.#present;
    for (const e of row) {
      const b = e >>> COUNT_BITS;
      table[b] = (e & COUNT_MASK) * (idf[b] as number) ** 2;
      const f = (b & FILTER_MASK) >>> 5;
      present[f] = (present[f] as number) | (1 << (b & 31));
    }
    for (let x = 0; x < js.length; x++) {
      const j = js[x] as number;
      if (j < 0) continue;
      out[x] = Math.min(1, this.#rows.dot(j, table, present) * (inv[i] as number) * (inv[j] as number));
    }
    for (const e of row) {
      table[e >>> COUNT_BITS] = 0;
      present[((e >>> COUNT_BITS) & FILTER_MASK) >>> 5] = 0;
    }
  }

  /**
   * Row i's `out.length` rarest buckets among those in 2..maxDf documents (a bucket in one document pairs
   * nothing; a common one is no evidence), rarest first; returns how many were written.
   */
  rarest(i: number, maxDf: number, out: Uint32Array): number {
    const df = this.#df;
    const row = this.#row(i);
    const keyed = this.#keyed.length >= row.length ? this.#keyed : new Float64Array(2 * row.length);
    this.#keyed = keyed;
    let m = 0;
    for (const e of row) {
      const bucket = e >>> COUNT_BITS;
      const f = df[bucket] as number;
      if (f >= 2 && f <= maxDf) keyed[m++] = f * BUCKETS + bucket;
    }
    const kept = keyed.subarray(0, m).sort();
    const count = Math.min(out.length, m);
    for (let x = 0; x < count; x++) out[x] = (kept[x] as number) % BUCKETS;
    return count;
  }

  /** The smooth idf of a bucket (after finish). */
  idfOf(bucket: number): number {
    return this.#ready()[bucket] as number;
  }

  /** Rows `rows` projected to `dim` floats each (signed feature hashing of the normalized rows). */
  project(rows: ArrayLike<number>, dim: number): Float32Array {
    const idf = this.#ready();
    const inv = this.#invNorm as Float32Array;
    const out = new Float32Array(rows.length * dim);
    for (let r = 0; r < rows.length; r++) {
      const i = rows[r] as number;
      const base = r * dim;
      for (const e of this.#row(i)) {
        const bucket = e >>> COUNT_BITS;
        const h = fmix(bucket ^ 0x5bd1e995);
        const w = (e & COUNT_MASK) * (idf[bucket] as number) * (inv[i] as number);
        const at = base + ((h & 0x7fffffff) % dim);
        out[at] = (out[at] as number) + (h >>> 31 === 1 ? -w : w);
      }
    }
    return out;
  }

  #ready(): Float32Array {
    if (this.#idf === undefined) throw new Error('DocGrams: finish() first');
    return this.#idf;
  }

  /** Row i's packed entries: a view of one scratch, valid until the next call. */
  #row(i: number): Uint32Array {
    if (this.#decoded.length < this.#rows.longest) this.#decoded = new Uint32Array(this.#rows.longest);
    return this.#decoded.subarray(0, this.#rows.decode(i, this.#decoded));
  }
}

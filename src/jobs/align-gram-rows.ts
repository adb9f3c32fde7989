/**
 * The documents' gram rows, compressed: each row's sorted (bucket, count) entries kept as LEB128 varints of
 * the gap to the previous bucket, shifted left one bit whose set value says a count above 1 follows (as a
 * varint of count - 2). A document of a few sentences holds ~600 distinct buckets of 2^22, gaps of ~7,000:
 * 2.50 bytes an entry on the 10^5 lab documents, where a packed u32 took 4 (docs/benchmarks/documents.md).
 * Rows are decoded into a caller's scratch, or dotted with a dense table as they are read (cosines' hot path).
 */

/** Bytes a storage chunk (64 MB): the rows grow by chunks, never by copying all of them. */
const CHUNK_BYTES = 1 << 26;
/**
 * Low bits of a bucket that dot()'s filter keeps (2^16 bits, 8 KB a scoring thread): a row of ~600 buckets
 * sets under 1% of them. A bit for each of the 2^22 buckets (512 KB) scored no faster (10.8 us a candidate
 * against 10.5, 200k lab documents, AMD EPYC): decoding the rows is the cost, not the filter.
 */
export const FILTER_BITS = 16;
export const FILTER_MASK = (1 << FILTER_BITS) - 1;
/** The most bytes an entry takes: a gap of up to 2^22 shifted (4), a count of up to 2^10 (2). */
const MAX_ENTRY = 6;

/** Rows as another thread reads them (GramRows.read): the chunks' shared memory, and the rows' places. */
export interface SharedGramRows {
  countBits: number;
  chunks: Uint8Array[];
  chunkOf: Uint16Array;
  start: Uint32Array;
  end: Uint32Array;
  longest: number;
}

/** A typed array's first n entries in shared memory (a worker thread reads them in place). */
function sharedCopy<T extends Uint16Array | Uint32Array>(
  a: T,
  n: number,
  make: (b: SharedArrayBuffer) => T,
): T {
  const out = make(new SharedArrayBuffer(n * a.BYTES_PER_ELEMENT));
  out.set(a.subarray(0, n));
  return out;
}

export class GramRows {
  readonly #chunks: Uint8Array[] = [];
  #fill = 0;
  /** Row i: its chunk, and the start and end of its bytes there. */
  #chunkOf: Uint16Array = new Uint16Array(1024);
  #start: Uint32Array = new Uint32Array(1024);
  #end: Uint32Array = new Uint32Array(1024);
  #n = 0;
  #longest = 0;
  #entries = 0;
  #used = 0;
  #encoded = new Uint8Array(MAX_ENTRY * 1024);

  constructor(
    /** Low bits of a packed entry that hold its count (the rest: its bucket). */
    private readonly countBits: number,
    private readonly chunkBytes = CHUNK_BYTES,
  ) {}

  get count(): number {
    return this.#n;
  }

  /** The most entries a row holds: what decode() may write. */
  get longest(): number {
    return this.#longest;
  }

  /** Adds a row of packed (bucket << countBits | count) entries, sorted by bucket. */
  add(entries: Uint32Array): void {
    if (this.#encoded.length < MAX_ENTRY * entries.length)
      this.#encoded = new Uint8Array(2 * MAX_ENTRY * entries.length);
    const out = this.#encoded;
    const mask = (1 << this.countBits) - 1;
    let at = 0;
    let prev = -1;
    const put = (v: number) => {
      while (v >= 0x80) {
        out[at++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      out[at++] = v;
    };
    for (const e of entries) {
      const bucket = e >>> this.countBits;
      const count = e & mask;
      put(((bucket - prev) << 1) | (count > 1 ? 1 : 0));
      if (count > 1) put(count - 2);
      prev = bucket;
    }
    if (this.#chunks.length === 0 || this.#fill + at > this.chunkBytes) {
      // Shared memory, so a worker thread reads the rows in place (share()).
      this.#chunks.push(new Uint8Array(new SharedArrayBuffer(Math.max(this.chunkBytes, at))));
      this.#fill = 0;
    }
    (this.#chunks[this.#chunks.length - 1] as Uint8Array).set(out.subarray(0, at), this.#fill);
    this.#grow();
    this.#chunkOf[this.#n] = this.#chunks.length - 1;
    this.#start[this.#n] = this.#fill;
    this.#fill += at;
    this.#end[this.#n] = this.#fill;
    this.#n++;
    this.#longest = Math.max(this.#longest, entries.length);
    this.#entries += entries.length;
    this.#used += at;
  }

  /** The rows as they stand, for another thread (read()): the chunks shared, the rows' places copied. */
  share(): SharedGramRows {
    const n = this.#n;
    return {
      countBits: this.countBits,
      chunks: [...this.#chunks],
      chunkOf: sharedCopy(this.#chunkOf, n, (b) => new Uint16Array(b)),
      start: sharedCopy(this.#start, n, (b) => new Uint32Array(b)),
      end: sharedCopy(this.#end, n, (b) => new Uint32Array(b)),
      longest: this.#longest,
    };
  }

  /** Rows another thread shared (share()), to read: decode() and dot(), never add(). */
  static read(s: SharedGramRows): GramRows {
    const rows = new GramRows(s.countBits);
    rows.#chunks.push(...s.chunks);
    rows.#chunkOf = s.chunkOf;
    rows.#start = s.start;
    rows.#end = s.end;
    rows.#n = s.chunkOf.length;
    rows.#longest = s.longest;
    return rows;
  }

  /** Row i's packed entries into `into` (at least `longest` long); returns how many. */
  decode(i: number, into: Uint32Array): number {
    const bytes = this.#chunks[this.#chunkOf[i] as number] as Uint8Array;
    const end = this.#end[i] as number;
    const shift = this.countBits;
    let p = this.#start[i] as number;
    let prev = -1;
    let n = 0;
    while (p < end) {
      let b = bytes[p++] as number;
      let v = b & 0x7f;
      for (let s = 7; b >= 0x80; s += 7) {
        b = bytes[p++] as number;
        v |= (b & 0x7f) << s;
      }
      let count = 1;
      if ((v & 1) === 1) {
        b = bytes[p++] as number;
        let c = b & 0x7f;
        for (let s = 7; b >= 0x80; s += 7) {
          b = bytes[p++] as number;
          c |= (b & 0x7f) << s;
        }
        count = c + 2;
      }
      prev += v >>> 1;
      into[n++] = ((prev << shift) | count) >>> 0;
    }
    return n;
  }

  /**
   * The sum over row i's entries of count x table[bucket], decoded as read, nothing written; `present` (a
   * bit for each of FILTER_BITS's values of a bucket's low bits: 8 KB, held in a core's L1 where the 16 MB
   * table is not) says which of the table's entries may not be zero, so most of the row's buckets cost no
   * lookup in the table (a bucket that shares its low bits with a set one reads a zero there).
   */
  dot(i: number, table: Float32Array, present: Int32Array): number {
    const bytes = this.#chunks[this.#chunkOf[i] as number] as Uint8Array;
    const end = this.#end[i] as number;
    let p = this.#start[i] as number;
    let prev = -1;
    let sum = 0;
    while (p < end) {
      // Most gaps take two bytes, some one: those read without a loop.
      let v = bytes[p++] as number;
      if (v >= 0x80) {
        let b = bytes[p++] as number;
        v = (v & 0x7f) | ((b & 0x7f) << 7);
        for (let s = 14; b >= 0x80; s += 7) {
          b = bytes[p++] as number;
          v |= (b & 0x7f) << s;
        }
      }
      prev += v >>> 1;
      const hit = ((present[(prev & FILTER_MASK) >>> 5] as number) >>> (prev & 31)) & 1;
      if ((v & 1) === 0) {
        if (hit === 1) sum += table[prev] as number;
      } else {
        let b = bytes[p++] as number;
        let c = b & 0x7f;
        for (let s = 7; b >= 0x80; s += 7) {
          b = bytes[p++] as number;
          c |= (b & 0x7f) << s;
        }
        if (hit === 1) sum += (c + 2) * (table[prev] as number);
      }
    }
    return sum;
  }

  /** What the rows hold: entries, the bytes they take, and the bytes of the chunks that hold them. */
  get size(): { entries: number; bytes: number; allocated: number } {
    const allocated = this.#chunks.reduce((sum, c) => sum + c.length, 0);
    return { entries: this.#entries, bytes: this.#used, allocated };
  }

  #grow(): void {
    if (this.#n < this.#start.length) return;
    const cap = this.#start.length * 2;
    const chunkOf = new Uint16Array(cap);
    chunkOf.set(this.#chunkOf);
    const start = new Uint32Array(cap);
    start.set(this.#start);
    const end = new Uint32Array(cap);
    end.set(this.#end);
    this.#chunkOf = chunkOf;
    this.#start = start;
    this.#end = end;
  }
}

/**
 * A compact map from a pair of uint32 (a, b) to a dense id (0, 1, 2, … in insertion order), for n-gram
 * tables with tens of millions of entries: open addressing with linear probing over typed arrays, so an
 * entry costs ~24 bytes instead of a JS Map's ~100 and nothing is left for the garbage collector.
 * Ids index the caller's own parallel arrays (see GrowableArray).
 */

const EMPTY = -1;
const MAX_LOAD = 0.6;

function hashPair(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x7f4a7c15, 0xc2b2ae35);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h >>> 0;
}

export interface PairTableArrays {
  keys: Uint32Array;
  ids: Int32Array;
  size: number;
}

export class PairTable {
  private keys: Uint32Array;
  private ids: Int32Array;
  private mask: number;
  #size = 0;

  constructor(capacity = 1024) {
    let cap = 16;
    while (cap * MAX_LOAD < capacity) cap *= 2;
    this.keys = new Uint32Array(cap * 2);
    this.ids = new Int32Array(cap).fill(EMPTY);
    this.mask = cap - 1;
  }

  /** A table over arrays written by toArrays() (a saved model), without copying them. */
  static fromArrays(arrays: PairTableArrays): PairTable {
    const t = new PairTable(16);
    const cap = arrays.ids.length;
    if (cap === 0 || (cap & (cap - 1)) !== 0 || arrays.keys.length !== cap * 2) {
      throw new Error(`pair table: capacity ${cap} is not a power of two with ${arrays.keys.length} keys`);
    }
    t.keys = arrays.keys;
    t.ids = arrays.ids;
    t.mask = cap - 1;
    t.#size = arrays.size;
    return t;
  }

  get size(): number {
    return this.#size;
  }

  /** Bytes held by the table itself. */
  get bytes(): number {
    return this.keys.byteLength + this.ids.byteLength;
  }

  toArrays(): PairTableArrays {
    return { keys: this.keys, ids: this.ids, size: this.#size };
  }

  /** The id of (a, b), or -1. */
  get(a: number, b: number): number {
    const { keys, ids, mask } = this;
    let slot = hashPair(a, b) & mask;
    for (;;) {
      const id = ids[slot]!;
      if (id === EMPTY) return EMPTY;
      if (keys[2 * slot] === a && keys[2 * slot + 1] === b) return id;
      slot = (slot + 1) & mask;
    }
  }

  /** The id of (a, b), adding it with the next id when absent. */
  getOrAdd(a: number, b: number): number {
    if (this.#size + 1 > (this.mask + 1) * MAX_LOAD) this.grow();
    const { keys, ids, mask } = this;
    let slot = hashPair(a, b) & mask;
    for (;;) {
      const id = ids[slot]!;
      if (id === EMPTY) {
        keys[2 * slot] = a;
        keys[2 * slot + 1] = b;
        ids[slot] = this.#size;
        return this.#size++;
      }
      if (keys[2 * slot] === a && keys[2 * slot + 1] === b) return id;
      slot = (slot + 1) & mask;
    }
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldIds = this.ids;
    const cap = oldIds.length * 2;
    this.keys = new Uint32Array(cap * 2);
    this.ids = new Int32Array(cap).fill(EMPTY);
    this.mask = cap - 1;
    for (let s = 0; s < oldIds.length; s++) {
      const id = oldIds[s]!;
      if (id === EMPTY) continue;
      const a = oldKeys[2 * s]!;
      const b = oldKeys[2 * s + 1]!;
      let slot = hashPair(a, b) & this.mask;
      while (this.ids[slot] !== EMPTY) slot = (slot + 1) & this.mask;
      this.keys[2 * slot] = a;
      this.keys[2 * slot + 1] = b;
      this.ids[slot] = id;
    }
  }
}

type Typed = Uint32Array | Int32Array | Float32Array;

/** A typed array that grows by doubling: the per-id columns beside a PairTable. */
export class GrowableArray<T extends Typed> {
  data: T;
  length = 0;
  private readonly make: (n: number) => T;

  constructor(make: (n: number) => T, capacity = 1024) {
    this.make = make;
    this.data = make(capacity);
  }

  /** Makes index i addressable (zero-filled), growing as needed. */
  ensure(i: number): void {
    if (i < this.length) return;
    if (i >= this.data.length) {
      let cap = this.data.length * 2;
      while (cap <= i) cap *= 2;
      const next = this.make(cap);
      next.set(this.data.subarray(0, this.length) as never);
      this.data = next;
    }
    this.length = i + 1;
  }

  /** The used part, trimmed to its length (a copy, so the spare capacity is released). */
  trimmed(): T {
    return this.data.slice(0, this.length) as T;
  }
}

/**
 * Deleted ids as a set and as a bitmap (bit i set: id i deleted) that FAISS filters with inside the
 * search (the binding's `exclude`): a query gets its k nearest live neighbours however many of its
 * nearest were deleted, without over-fetching. The set is what every other reader asks (`has`).
 */
export class TombstoneSet extends Set<number> {
  #bits = new Uint8Array(1024);

  constructor(ids: Iterable<number> = []) {
    // Set's own constructor would call add() before #bits exists.
    super();
    for (const id of ids) this.add(id);
  }

  override add(id: number): this {
    const byte = id >>> 3;
    if (byte >= this.#bits.length) {
      // A search running on the old bitmap keeps it (the binding holds it); it misses only this delete,
      // which the live index filters from its answer anyway.
      const grown = new Uint8Array(Math.max(byte + 1, this.#bits.length * 2));
      grown.set(this.#bits);
      this.#bits = grown;
    }
    this.#bits[byte] = (this.#bits[byte] as number) | (1 << (id & 7));
    return super.add(id);
  }

  override delete(id: number): boolean {
    const byte = id >>> 3;
    if (byte < this.#bits.length) this.#bits[byte] = (this.#bits[byte] as number) & ~(1 << (id & 7));
    return super.delete(id);
  }

  override clear(): void {
    this.#bits.fill(0);
    super.clear();
  }

  /** The bitmap as it is now (a new buffer after it grows: read it for each search). */
  get bitmap(): Uint8Array {
    return this.#bits;
  }
}

/**
 * A built index that takes writes while it serves: sentences added since the build sit in a growing
 * exact segment (FAISS `IDMap,Flat`: searchable the moment they are added, exact at any setting), deleted
 * ids are tombstones filtered out of every answer. A search asks the built shards for k plus as many more
 * as there are tombstones (up to MAX_OVERFETCH) and the segment for k, drops the deleted, and merges by
 * score. Sealing the segment into IVF-PQ with the build's trained template, and compaction, are the
 * next steps (issue #30).
 */
import { createIndex, type FaissIndex, type Metric, type SearchResult } from '../native/index.js';
import type { ShardedIndex, ShardSearchParams } from './sharded.js';

/** Most extra neighbours a search asks the built shards for, to make up for deleted ones. */
export const MAX_OVERFETCH = 1024;

export class LiveIndex {
  #segment: FaissIndex | undefined;

  constructor(
    readonly base: ShardedIndex,
    /** The deleted ids (a live view: the updates' own set). */
    private readonly tombstones: ReadonlySet<number>,
  ) {}

  get dim(): number {
    return this.base.dim;
  }

  get metric(): Metric {
    return this.base.metric;
  }

  /** Vectors in the growing segment (deleted ones included until compaction). */
  get segmentSize(): number {
    return this.#segment?.ntotal ?? 0;
  }

  /** Adds vectors (n x dim, row-major) under their ids to the growing segment. */
  async add(vectors: Float32Array, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    this.#segment ??= createIndex('IDMap,Flat', this.dim, this.metric);
    await this.#segment.add(
      vectors,
      BigInt64Array.from(ids, (id) => BigInt(id)),
    );
  }

  async search(queries: Float32Array, k: number, options: ShardSearchParams = {}): Promise<SearchResult> {
    const dead = this.tombstones.size;
    if (dead === 0 && this.#segment === undefined) return this.base.search(queries, k, options);
    const n = queries.length / this.dim;
    const deep = k + Math.min(dead, MAX_OVERFETCH);
    const [built, grown] = await Promise.all([
      this.base.search(queries, deep, options),
      this.#segment?.search(queries, k),
    ]);
    const better = this.metric === 'ip' ? (a: number, b: number) => b - a : (a: number, b: number) => a - b;
    const distances = new Float32Array(n * k);
    const ids = new BigInt64Array(n * k).fill(-1n);
    for (let q = 0; q < n; q++) {
      const row: Array<{ id: bigint; d: number }> = [];
      const take = (r: SearchResult, width: number) => {
        for (let j = 0; j < width; j++) {
          const id = r.ids[q * width + j] as bigint;
          if (id >= 0n && !this.tombstones.has(Number(id)))
            row.push({ id, d: r.distances[q * width + j] as number });
        }
      };
      take(built, deep);
      if (grown) take(grown, k);
      row.sort((x, y) => better(x.d, y.d));
      row.slice(0, k).forEach((h, j) => {
        ids[q * k + j] = h.id;
        distances[q * k + j] = h.d;
      });
    }
    return { distances, ids };
  }

  async close(): Promise<void> {
    await this.#segment?.close();
    this.#segment = undefined;
  }
}

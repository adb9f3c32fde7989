/**
 * Building an index directory, the way the indexer does it:
 *
 *   const plan = chooseFactory({ n, dim });
 *   const builder = await IndexBuilder.train({ dim, metric: 'ip', factory: plan.factory, shards: 4,
 *                                              sample });           // plan.trainSize vectors
 *   await builder.add(batch, ids);                                   // ids dense from 0, any order
 *   const manifest = await builder.write(dir, { model, build: { plan } });
 *   await builder.close();
 *
 * One index is trained; every shard is an empty clone of it, so all shards share the coarse quantizer and
 * codebooks (shards can later be merged, and their scores are comparable).
 */
import { ParamineError } from '../errors.js';
import { createIndex, type FaissIndex, type Metric } from '../native/index.js';
import type { Manifest } from './manifest.js';
import { type WriteOptions, writeShardedIndex } from './sharded.js';

export interface BuilderOptions {
  dim: number;
  metric: Metric;
  factory: string;
  /** Shard count (default 1). */
  shards?: number;
  /** Training vectors (row-major, dim floats each); ignored (may be empty) for factories born trained. */
  sample: Float32Array;
}

/** A growable bit set over ids, to refuse a duplicate id before FAISS stores it twice. */
class IdSet {
  #bits = new Uint8Array(1024);
  #count = 0;
  #max = -1;

  get count(): number {
    return this.#count;
  }
  get max(): number {
    return this.#max;
  }

  has(id: number): boolean {
    return id >> 3 < this.#bits.length && (this.#bits[id >> 3]! & (1 << (id & 7))) !== 0;
  }

  add(id: number): void {
    const byte = id >> 3;
    if (byte >= this.#bits.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.#bits.length * 2));
      grown.set(this.#bits);
      this.#bits = grown;
    }
    this.#bits[byte] = this.#bits[byte]! | (1 << (id & 7));
    this.#count++;
    if (id > this.#max) this.#max = id;
  }

  /** Every id in 0..max present (max + 1 === count, recomputed if a delete left max stale). */
  isDense(): boolean {
    while (this.#max >= 0 && !this.has(this.#max)) this.#max--;
    return this.#max + 1 === this.#count;
  }

  /** Undoes add() for ids whose batch FAISS refused (max is only an upper bound afterwards). */
  delete(id: number): void {
    if (!this.has(id)) return;
    this.#bits[id >> 3] = this.#bits[id >> 3]! & ~(1 << (id & 7));
    this.#count--;
  }
}

// Ids above 2^31 would need a different bit set; a single index of that size is out of scope for now.
const MAX_ID = 2 ** 31 - 2;

export class IndexBuilder {
  readonly dim: number;
  readonly metric: Metric;
  readonly factory: string;
  readonly #template: FaissIndex;
  readonly #shards: FaissIndex[];
  readonly #queued: number[];
  readonly #ids = new IdSet();
  #closed = false;

  private constructor(options: BuilderOptions, template: FaissIndex, shards: FaissIndex[]) {
    this.dim = options.dim;
    this.metric = options.metric;
    this.factory = options.factory;
    this.#template = template;
    this.#shards = shards;
    this.#queued = shards.map(() => 0);
  }

  /** Creates the index, trains it on `sample`, and clones it empty once per shard. */
  static async train(options: BuilderOptions): Promise<IndexBuilder> {
    const shardCount = options.shards ?? 1;
    if (!Number.isInteger(shardCount) || shardCount < 1 || shardCount > 1000) {
      throw new ParamineError('BAD_INPUT', 'shards must be an integer in [1, 1000]', { field: 'shards' });
    }
    const template = createIndex(options.factory, options.dim, options.metric);
    const shards: FaissIndex[] = [];
    try {
      // Flat and other untrained-free indexes skip training (an empty sample is fine for them).
      if (!template.isTrained) await template.train(options.sample);
      for (let i = 0; i < shardCount; i++) shards.push(await template.cloneEmpty());
    } catch (e) {
      await Promise.all([template, ...shards].map((x) => x.close()));
      throw e;
    }
    return new IndexBuilder(options, template, shards);
  }

  get shardCount(): number {
    return this.#shards.length;
  }
  /** Vectors in each shard. */
  get shardCounts(): number[] {
    return this.#shards.map((s) => s.ntotal);
  }
  get ntotal(): number {
    return this.#shards.reduce((s, x) => s + x.ntotal, 0);
  }
  /** The trained, empty index the shards were cloned from (e.g. to clone more shards). */
  get template(): FaissIndex {
    return this.#template;
  }

  /**
   * Adds one batch to one shard (default: the shard with the fewest vectors added or queued). Batches for
   * different shards run in parallel; ids must be non-negative and never repeat.
   */
  async add(vectors: Float32Array, ids: BigInt64Array, options: { shard?: number } = {}): Promise<void> {
    if (this.#closed) throw new ParamineError('INDEX_CLOSED', 'builder is closed');
    const shard = options.shard ?? this.#queued.indexOf(Math.min(...this.#queued));
    if (!Number.isInteger(shard) || shard < 0 || shard >= this.#shards.length) {
      throw new ParamineError('BAD_INPUT', `shard must be in [0, ${this.#shards.length - 1}]`, {
        field: 'shard',
      });
    }
    if (vectors.length !== ids.length * this.dim) {
      throw new ParamineError('BAD_INPUT', `${ids.length} ids for ${vectors.length / this.dim} vectors`, {
        field: 'ids',
      });
    }
    const fresh = new Set<number>();
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (id < 0n || id > BigInt(MAX_ID)) {
        throw new ParamineError('BAD_INPUT', `ids[${i}] = ${id} is outside [0, ${MAX_ID}]`, {
          field: `ids[${i}]`,
        });
      }
      const n = Number(id);
      if (this.#ids.has(n) || fresh.has(n)) {
        throw new ParamineError('BAD_INPUT', `id ${n} was already added`, { field: `ids[${i}]` });
      }
      fresh.add(n);
    }
    for (const n of fresh) this.#ids.add(n);
    this.#queued[shard] = this.#queued[shard]! + ids.length;
    try {
      await this.#shards[shard]!.add(vectors, ids);
    } catch (e) {
      for (const n of fresh) this.#ids.delete(n);
      this.#queued[shard] = this.#queued[shard]! - ids.length;
      throw e;
    }
  }

  /**
   * Writes the shards and the manifest. Ids must be dense (every id in 0..n-1 added once): the store keys
   * texts by the same ids.
   */
  async write(dir: string, options: WriteOptions): Promise<Manifest> {
    if (this.#closed) throw new ParamineError('INDEX_CLOSED', 'builder is closed');
    if (this.#ids.count > 0 && !this.#ids.isDense()) {
      throw new ParamineError(
        'BAD_INPUT',
        `ids are not dense: ${this.#ids.count} vectors but the largest id is ${this.#ids.max}`,
      );
    }
    return writeShardedIndex(dir, this.#shards, this, {
      ...options,
      build: { shards: this.#shards.length, ...options.build },
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([this.#template, ...this.#shards].map((x) => x.close()));
  }
}

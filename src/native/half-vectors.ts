import { load, type NativeHalfVectors, wrap } from './addon.js';
import type { Metric, SearchResult } from './types.js';

/**
 * A file of count x dim half floats (an index's vectors.f16), memory-mapped: re-scoring ANN candidates
 * with exact vectors costs page cache, not process memory.
 */
export class HalfVectors {
  readonly #native: NativeHalfVectors;

  private constructor(native: NativeHalfVectors) {
    this.#native = native;
  }

  static async open(path: string, dim: number): Promise<HalfVectors> {
    return new HalfVectors(await wrap(() => load().openHalfVectors(path, dim)));
  }

  get count(): number {
    return this.#native.count;
  }
  get dim(): number {
    return this.#native.dim;
  }

  /**
   * For each query row, scores its row of `candidates` (same count per query, -1 = empty) exactly and
   * keeps the best k, best first (ties: smaller id).
   */
  rescore(
    queries: Float32Array,
    candidates: BigInt64Array,
    k: number,
    metric: Metric,
  ): Promise<SearchResult> {
    return wrap(() => this.#native.rescore(queries, candidates, k, metric));
  }

  /**
   * Rows of `ids` (in range, repeats allowed) as ids.length x dim float32, read off the JS thread: into `out`
   * when given (exactly that long), which is returned.
   */
  gather(ids: BigInt64Array, out?: Float32Array): Promise<Float32Array> {
    return wrap(() => this.#native.gather(ids, out));
  }

  close(): Promise<void> {
    return wrap(() => this.#native.close());
  }
}

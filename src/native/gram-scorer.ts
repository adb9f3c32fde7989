import { load, type NativeGramScorer, toParamineError } from './addon.js';
import type { GramRowsView, Int8RowsView } from './types.js';

/**
 * Exact scores of candidate document pairs in C++ (gram_scorer.cc): the TF-IDF cosine of two documents'
 * compressed n-gram rows, or with `means` hybrid's mean of it and their int8 embeddings' dot, bit-identical
 * to DocGrams.cosines and hybridScore. The arrays are read in place (a worker thread makes its own scorer
 * over the same shared memory) and must not change while it is used.
 */
export class GramScorer {
  readonly #native: NativeGramScorer;

  private constructor(native: NativeGramScorer) {
    this.#native = native;
  }

  static create(
    rows: GramRowsView,
    idf: Float32Array,
    invNorm: Float32Array,
    means?: Int8RowsView,
  ): GramScorer {
    try {
      const Native = load().GramScorer;
      return new GramScorer(
        means === undefined ? new Native(rows, idf, invNorm) : new Native(rows, idf, invNorm, means),
      );
    } catch (e) {
      throw toParamineError(e);
    }
  }

  /** out[x] = the score of documents i and js[x], for each js[x] >= 0 (other entries left as they are). */
  score(i: number, js: Int32Array, out: Float32Array): void {
    try {
      this.#native.score(i, js, out);
    } catch (e) {
      throw toParamineError(e);
    }
  }
}

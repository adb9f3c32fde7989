/**
 * The model ports behind a Batcher: what the search core and the jobs call instead of the models. The
 * interactive view refuses work when the queue is full; the bulk view (mining jobs) waits its turn.
 */
import type { Embedder } from '../encode/index.js';
import type { Pair, PairScore, PairScorer } from '../rerank/index.js';
import { Batcher, type BatcherOptions } from './batcher.js';

type Options<I> = Omit<BatcherOptions<I>, 'name' | 'cost'>;

/**
 * Tokens a text costs a model that cannot count them (English WordPiece runs ~4 characters a token;
 * [CLS]/[SEP] added). Batches are sized and waits predicted in tokens; the ONNX models count their own
 * (`Embedder.tokens`, `PairScorer.tokens`: the tokenizer's lengths, truncation included).
 */
const tokensOf = (text: string): number => 2 + Math.ceil(text.length / 4);
const pairTokensOf = ([a, b]: Pair): number => tokensOf(a) + tokensOf(b) - 1;

export class BatchedEmbedder {
  readonly dim: number;
  readonly batcher: Batcher<string, Float32Array>;

  constructor(inner: Embedder, options: Options<string>) {
    this.dim = inner.dim;
    const dim = inner.dim;
    this.batcher = new Batcher(
      async (texts) => {
        const v = await inner.encode(texts);
        return texts.map((_, i) => v.subarray(i * dim, (i + 1) * dim));
      },
      { ...options, name: 'encoder', cost: inner.tokens?.bind(inner) ?? tokensOf },
    );
  }

  /** An Embedder over the batcher; `unbounded` ones wait instead of being refused. */
  port(unbounded = false): Embedder {
    return {
      dim: this.dim,
      ...(unbounded ? {} : { admit: (n: number) => this.batcher.admit(n) }),
      encode: async (texts, signal) => {
        const rows = await this.batcher.submit(texts, { signal, unbounded });
        const out = new Float32Array(rows.length * this.dim);
        rows.forEach((r, i) => {
          out.set(r, i * this.dim);
        });
        return out;
      },
    };
  }
}

export class BatchedScorer {
  readonly batcher: Batcher<Pair, PairScore>;
  readonly #inner: PairScorer;

  constructor(inner: PairScorer, options: Options<Pair>) {
    this.#inner = inner;
    this.batcher = new Batcher((pairs) => inner.score(pairs), {
      ...options,
      name: 'reranker',
      cost: inner.tokens?.bind(inner) ?? pairTokensOf,
    });
  }

  /** A PairScorer over the batcher; `unbounded` ones wait instead of being refused. */
  port(unbounded = false): PairScorer {
    const inner = this.#inner;
    return {
      labels: inner.labels,
      positiveLabels: inner.positiveLabels,
      // The calibration travels with the port: without it the service would rank uncalibrated.
      ...(inner.calibration === undefined ? {} : { calibration: inner.calibration }),
      ...(inner.rerankOrder === undefined ? {} : { rerankOrder: inner.rerankOrder }),
      ...(unbounded
        ? {}
        : { admit: (n: number) => this.batcher.admit(n), reserve: (n: number) => this.batcher.reserve(n) }),
      score: (pairs, signal, options) =>
        this.batcher.submit(pairs, { signal, unbounded, reservation: options?.reservation }),
    };
  }
}

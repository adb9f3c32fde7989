/**
 * What a text or a pair costs a model in tokens, counted by the model's own tokenizer on the calling thread,
 * truncation and special tokens included: the batchers size batches and predict waits in these units (an
 * estimate from characters was off by 2x on numbers, URLs and non-English text). Counts of recent texts are
 * kept: a query meets its 20 candidates, and candidates recur across queries.
 */
import { type ModelDir, type ReadModelDirOptions, readModelDir } from './dir.js';
import type { Pair } from './ports.js';
import { TextTokenizer } from './runtime.js';

/** Texts whose piece counts are kept; beyond, the oldest half goes (a Map iterates in insertion order). */
const KEEP = 8192;

export class TokenCount {
  readonly #tok: TextTokenizer;
  readonly #pieces = new Map<string, number>();

  constructor(tok: TextTokenizer) {
    this.#tok = tok;
  }

  static async open(dir: string, opts: ReadModelDirOptions = {}): Promise<TokenCount> {
    return TokenCount.of(await readModelDir(dir, opts));
  }

  /** From a model directory already read (its tokenizer, its maximum length). */
  static of(md: ModelDir): TokenCount {
    return new TokenCount(new TextTokenizer(md));
  }

  /** Tokens the model runs for one text. */
  text(text: string): number {
    return this.#tok.tokensOf(this.#piecesOf(text));
  }

  /** Tokens the model runs for a pair, cut longest-first to its budget. */
  pair([a, b]: Pair): number {
    return this.#tok.tokensOf(this.#piecesOf(a), this.#piecesOf(b));
  }

  #piecesOf(text: string): number {
    const known = this.#pieces.get(text);
    if (known !== undefined) return known;
    const n = this.#tok.pieceCount(text);
    if (this.#pieces.size >= KEEP) {
      let drop = KEEP / 2;
      for (const k of this.#pieces.keys()) {
        this.#pieces.delete(k);
        if (--drop === 0) break;
      }
    }
    this.#pieces.set(text, n);
    return n;
  }
}

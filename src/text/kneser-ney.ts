/**
 * Interpolated modified Kneser–Ney n-gram language models (Chen & Goodman 1998, as KenLM and SRILM
 * estimate them), for Moore–Lewis domain scores.
 *
 *  - Sentences are `<s> w1 … wm </s>` over lmTokens(text) (tokenize() lower-cased); </s> is predicted and
 *    counted, <s> is only context. Words outside the vocabulary become <unk>, an ordinary word.
 *  - Counts: the highest order and n-grams starting with <s> keep their raw counts; every other n-gram
 *    gets its continuation count N1+(• g), the number of distinct words seen to its left.
 *  - Discounts per order from those counts' count-of-counts n1…n4: Y = n1 / (n1 + 2 n2),
 *    D1 = 1 − 2Y n2/n1, D2 = 2 − 3Y n3/n2, D3+ = 3 − 4Y n4/n3. When a count-of-count is 0 or a discount
 *    falls outside (0, i] (tiny corpora) the order uses (0.5, 1, 1.5) instead.
 *  - p(w | h) = max(c(hw) − D(c(hw)), 0) / c(h•) + γ(h) p(w | h'), γ(h) = (D1 N1(h•) + D2 N2(h•) +
 *    D3+ N3+(h•)) / c(h•), with h' = h minus its first word; an unseen context passes p(w | h') on; the
 *    unigrams interpolate with the uniform distribution over the vocabulary (minus <s>, plus <unk>), so
 *    every p(· | h) sums to 1 over it.
 *
 * Storage (memory is the constraint at hundreds of thousands of training sentences): contexts form a trie
 * keyed (parent context, next word to the left), n-grams a table keyed (context, word), both PairTables of
 * typed arrays, so a lookup walks the history right to left one hash probe per order.
 */

import { BOS, BOS_ID, EOS_ID, LmVocabulary, lmTokens } from './lm-vocabulary.js';
import { GrowableArray, PairTable } from './pair-table.js';

export {
  BOS,
  BOS_ID,
  countTokens,
  EOS,
  EOS_ID,
  LmVocabulary,
  lmTokens,
  UNK,
  UNK_ID,
} from './lm-vocabulary.js';

/** The empty context (root of the context trie). */
const ROOT = 0;
const ROOT_KEY = 0xffffffff;
export const FALLBACK_DISCOUNTS: readonly [number, number, number] = [0.5, 1, 1.5];
export const MAX_ORDER = 8;

export interface KneserNeyInfo {
  order: number;
  vocabulary: number;
  /** Distinct n-grams per order (index 0 = unigrams). */
  ngrams: number[];
  /** (D1, D2, D3+) per order. */
  discounts: Array<[number, number, number]>;
  bytes: number;
}

/** Counts n-grams sentence by sentence, then estimates the model. */
export class KneserNeyBuilder {
  readonly order: number;
  readonly vocabulary: LmVocabulary;
  private readonly contexts = new PairTable(1 << 16);
  private readonly ctxParent = new GrowableArray((n) => new Int32Array(n));
  private readonly ctxFirst = new GrowableArray((n) => new Uint32Array(n));
  private readonly ctxDepth = new GrowableArray((n) => new Uint32Array(n));
  private readonly entries = new PairTable(1 << 16);
  private readonly entryCtx = new GrowableArray((n) => new Uint32Array(n));
  private readonly entryWord = new GrowableArray((n) => new Uint32Array(n));
  private readonly entryCount = new GrowableArray((n) => new Uint32Array(n));
  private sentences = 0;

  constructor(vocabulary: LmVocabulary, order = 5) {
    if (!Number.isInteger(order) || order < 1 || order > MAX_ORDER) {
      throw new RangeError(`order must be an integer in [1, ${MAX_ORDER}], got ${order}`);
    }
    this.order = order;
    this.vocabulary = vocabulary;
    const root = this.contexts.getOrAdd(ROOT_KEY, ROOT_KEY);
    this.ctxParent.ensure(root);
    this.ctxParent.data[root] = -1;
    this.ctxFirst.ensure(root);
    this.ctxDepth.ensure(root);
  }

  /** Adds one sentence, as lmTokens() gives it. */
  add(tokens: readonly string[]): void {
    const ids = sentenceIds(this.vocabulary, tokens);
    for (let i = 1; i < ids.length; i++) {
      const w = ids[i]!;
      let c = ROOT;
      this.count(c, w);
      for (let k = 2; k <= this.order && i - k + 1 >= 0; k++) {
        c = this.child(c, ids[i - k + 1]!);
        this.count(c, w);
      }
    }
    this.sentences++;
  }

  addText(text: string): void {
    this.add(lmTokens(text));
  }

  get sentenceCount(): number {
    return this.sentences;
  }

  private child(parent: number, word: number): number {
    const before = this.contexts.size;
    const c = this.contexts.getOrAdd(parent, word);
    if (c === before) {
      this.ctxParent.ensure(c);
      this.ctxParent.data[c] = parent;
      this.ctxFirst.ensure(c);
      this.ctxFirst.data[c] = word;
      this.ctxDepth.ensure(c);
      this.ctxDepth.data[c] = this.ctxDepth.data[parent]! + 1;
    }
    return c;
  }

  private count(ctx: number, word: number): void {
    const before = this.entries.size;
    const e = this.entries.getOrAdd(ctx, word);
    if (e === before) {
      this.entryCtx.ensure(e);
      this.entryCtx.data[e] = ctx;
      this.entryWord.ensure(e);
      this.entryWord.data[e] = word;
      this.entryCount.ensure(e);
    }
    this.entryCount.data[e]!++;
  }

  /** Estimates the model; the builder must not be used afterwards. */
  build(): KneserNeyLM {
    const n = this.entries.size;
    const ctxOf = this.entryCtx.data;
    const wordOf = this.entryWord.data;
    const raw = this.entryCount.data;
    const depth = this.ctxDepth.data;
    const first = this.ctxFirst.data;
    const parent = this.ctxParent.data;
    const startsWithBos = (ctx: number) => depth[ctx]! >= 1 && first[ctx] === BOS_ID;
    // Adjusted counts: raw at the top order and after <s>, else the number of distinct left extensions.
    const adj = new Uint32Array(n);
    for (let e = 0; e < n; e++) {
      const c = ctxOf[e]!;
      if (depth[c]! + 1 === this.order || startsWithBos(c)) adj[e] = raw[e]!;
    }
    for (let e = 0; e < n; e++) {
      const c = ctxOf[e]!;
      if (depth[c] === 0) continue;
      const s = this.entries.get(parent[c]!, wordOf[e]!);
      if (!startsWithBos(ctxOf[s]!)) adj[s]!++;
    }
    const discounts = estimateDiscounts(adj, ctxOf, depth, this.order);
    const nCtx = this.contexts.size;
    const ctxSum = new Float64Array(nCtx);
    const ctxBuckets = new Float64Array(nCtx * 3);
    const ngrams = new Array<number>(this.order).fill(0);
    for (let e = 0; e < n; e++) {
      const c = ctxOf[e]!;
      ctxSum[c]! += adj[e]!;
      ctxBuckets[c * 3 + Math.min(adj[e]!, 3) - 1]!++;
      ngrams[depth[c]!]!++;
    }
    const piece = new Float32Array(n);
    for (let e = 0; e < n; e++) {
      const c = ctxOf[e]!;
      const d = discounts[depth[c]!]!;
      const a = adj[e]!;
      piece[e] = Math.max(a - d[Math.min(a, 3) - 1]!, 0) / ctxSum[c]!;
    }
    const next = nextContexts(
      this.entries,
      this.contexts,
      { ctxOf, wordOf, depth, first, parent },
      this.order,
    );
    const gamma = new Float32Array(nCtx);
    for (let c = 0; c < nCtx; c++) {
      const d = discounts[depth[c]!]!;
      const b = c * 3;
      gamma[c] = (d[0] * ctxBuckets[b]! + d[1] * ctxBuckets[b + 1]! + d[2] * ctxBuckets[b + 2]!) / ctxSum[c]!;
    }
    return new KneserNeyLM({
      order: this.order,
      words: this.vocabulary.words,
      discounts,
      ngrams,
      contexts: this.contexts,
      entries: this.entries,
      piece,
      gamma,
      next,
    });
  }
}

/**
 * For each n-gram h·w, the context node of the same words (where the next position's lookups of that
 * length start), or -1 when h·w was never followed by a word (or is as long as a context can be). Scoring
 * then carries these from token to token instead of walking the history again (KenLM's state).
 */
function nextContexts(
  entries: PairTable,
  contexts: PairTable,
  a: { ctxOf: Uint32Array; wordOf: Uint32Array; depth: Uint32Array; first: Uint32Array; parent: Int32Array },
  order: number,
): Int32Array {
  const n = entries.size;
  const next = new Int32Array(n).fill(-1);
  // By increasing length: an n-gram's answer comes from its suffix's.
  for (let d = 0; d < order - 1; d++) {
    for (let e = 0; e < n; e++) {
      const c = a.ctxOf[e]!;
      if (a.depth[c] !== d) continue;
      if (d === 0) {
        next[e] = contexts.get(ROOT, a.wordOf[e]!);
        continue;
      }
      const s = next[entries.get(a.parent[c]!, a.wordOf[e]!)]!;
      next[e] = s < 0 ? -1 : contexts.get(s, a.first[c]!);
    }
  }
  return next;
}

/** [<s>, ids of tokens…, </s>]. */
function sentenceIds(vocabulary: LmVocabulary, tokens: readonly string[]): Uint32Array {
  const ids = new Uint32Array(tokens.length + 2);
  ids[0] = BOS_ID;
  for (let i = 0; i < tokens.length; i++) ids[i + 1] = vocabulary.id(tokens[i]!);
  ids[tokens.length + 1] = EOS_ID;
  return ids;
}

/** (D1, D2, D3+) per order (index = order − 1) from the adjusted counts' count-of-counts. */
function estimateDiscounts(
  adj: Uint32Array,
  ctxOf: Uint32Array,
  depth: Uint32Array,
  order: number,
): Array<[number, number, number]> {
  const coc = Array.from({ length: order }, () => [0, 0, 0, 0, 0]);
  for (let e = 0; e < adj.length; e++) {
    const a = adj[e]!;
    if (a <= 4) coc[depth[ctxOf[e]!]!]![a]!++;
  }
  return coc.map(([, n1, n2, n3, n4]) => discountsOf(n1!, n2!, n3!, n4!));
}

export function discountsOf(n1: number, n2: number, n3: number, n4: number): [number, number, number] {
  if (n1 === 0 || n2 === 0 || n3 === 0 || n4 === 0) return [...FALLBACK_DISCOUNTS];
  const y = n1 / (n1 + 2 * n2);
  const d: [number, number, number] = [1 - (2 * y * n2) / n1, 2 - (3 * y * n3) / n2, 3 - (4 * y * n4) / n3];
  return d.every((x, i) => x > 0 && x <= i + 1) ? d : [...FALLBACK_DISCOUNTS];
}

export interface KneserNeyParts {
  order: number;
  words: readonly string[];
  discounts: Array<[number, number, number]>;
  ngrams: number[];
  contexts: PairTable;
  entries: PairTable;
  /** Per n-gram: its discounted count over its context's total. */
  piece: Float32Array;
  /** Per context: its interpolation weight γ. */
  gamma: Float32Array;
  /** Per n-gram: the context node of its words, or -1 (see nextContexts). */
  next: Int32Array;
}

/** A trained model: probabilities, sentence cross-entropies. Save/load in kneser-ney-file.ts. */
export class KneserNeyLM {
  readonly order: number;
  readonly vocabulary: LmVocabulary;
  readonly parts: KneserNeyParts;
  private readonly uniform: number;

  constructor(parts: KneserNeyParts) {
    this.parts = parts;
    this.order = parts.order;
    this.vocabulary = new LmVocabulary(parts.words.slice(3));
    // Everything but <s> can be predicted.
    this.uniform = 1 / (this.vocabulary.size - 1);
  }

  get info(): KneserNeyInfo {
    const p = this.parts;
    return {
      order: this.order,
      vocabulary: this.vocabulary.size,
      ngrams: [...p.ngrams],
      discounts: p.discounts.map((d) => [...d] as [number, number, number]),
      bytes: p.contexts.bytes + p.entries.bytes + p.piece.byteLength + p.gamma.byteLength + p.next.byteLength,
    };
  }

  /**
   * p(ids[i] | ids[0..i)), interpolated from the unigram up. `state[k]` holds the context node of the k
   * words before i (state[0] = the root; -1 past the longest the model knows); it is advanced in place
   * to position i + 1.
   */
  private step(w: number, state: Int32Array): number {
    const { entries, piece, gamma, next } = this.parts;
    let p = this.uniform;
    // New state[k] comes from the n-gram found at k − 1; old state[k] is read before it is replaced.
    let carry = ROOT;
    let k = 0;
    for (; k < this.order; k++) {
      const c = state[k]!;
      if (c < 0) break;
      const e = entries.get(c, w);
      p = (e >= 0 ? piece[e]! : 0) + gamma[c]! * p;
      state[k] = carry;
      carry = e >= 0 ? next[e]! : -1;
    }
    if (k < this.order) state[k++] = carry;
    for (; k < this.order; k++) state[k] = -1;
    return p;
  }

  /** The state at a sentence start: the root and the context <s>. */
  private startState(): Int32Array {
    const state = new Int32Array(this.order).fill(-1);
    state[0] = ROOT;
    if (this.order > 1) state[1] = this.parts.contexts.get(ROOT, BOS_ID);
    return state;
  }

  private probAt(ids: Uint32Array, i: number): number {
    // Walk the history to the context nodes (the state), then step once.
    const state = new Int32Array(this.order).fill(-1);
    state[0] = ROOT;
    let c = ROOT;
    for (let k = 1; k < this.order && i - k >= 0; k++) {
      c = this.parts.contexts.get(c, ids[i - k]!);
      if (c < 0) break;
      state[k] = c;
    }
    return this.step(ids[i]!, state);
  }

  /**
   * p(word | context): context is the preceding tokens, oldest first, starting with '<s>' at the start
   * of a sentence (only its last order − 1 tokens matter).
   */
  probability(context: readonly string[], word: string): number {
    const ids = new Uint32Array(context.length + 1);
    context.forEach((t, i) => {
      ids[i] = t === BOS ? BOS_ID : this.vocabulary.id(t);
    });
    ids[context.length] = word === BOS ? BOS_ID : this.vocabulary.id(word);
    return this.probAt(ids, context.length);
  }

  /** log2 p of the sentence (with </s>) and the number of predicted tokens (words + 1). */
  sentenceLog2(tokens: readonly string[]): { log2: number; predicted: number } {
    const state = this.startState();
    let log2 = 0;
    for (const t of tokens) log2 += Math.log2(this.step(this.vocabulary.id(t), state));
    log2 += Math.log2(this.step(EOS_ID, state));
    return { log2, predicted: tokens.length + 1 };
  }

  /** Per-token cross-entropy in bits: −log2 p(sentence) / (words + 1). */
  crossEntropy(tokens: readonly string[]): number {
    const { log2, predicted } = this.sentenceLog2(tokens);
    return -log2 / predicted;
  }

  /** 2 ** (total cross-entropy) over several sentences, every predicted token weighted alike. */
  perplexity(sentences: ReadonlyArray<readonly string[]>): number {
    let log2 = 0;
    let predicted = 0;
    for (const s of sentences) {
      const r = this.sentenceLog2(s);
      log2 += r.log2;
      predicted += r.predicted;
    }
    return 2 ** (-log2 / predicted);
  }
}

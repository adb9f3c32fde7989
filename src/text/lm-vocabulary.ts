/** The n-gram LMs' words: tokens of a text, the vocabulary (word ↔ id) and token counts. */
import { tokenize } from './tokenize.js';

export const BOS = '<s>';
export const EOS = '</s>';
export const UNK = '<unk>';
export const BOS_ID = 0;
export const EOS_ID = 1;
export const UNK_ID = 2;

/** The LM's tokens of a text: tokenize() (normalized, Unicode-aware), lower-cased. */
export function lmTokens(text: string): string[] {
  return tokenize(text).map((t) => t.toLowerCase());
}

/** Word ↔ id; ids 0, 1, 2 are <s>, </s>, <unk>. */
export class LmVocabulary {
  readonly words: readonly string[];
  private readonly ids: Map<string, number>;

  constructor(words: Iterable<string>) {
    const all = [BOS, EOS, UNK];
    const seen = new Set(all);
    for (const w of words) {
      if (!seen.has(w)) {
        seen.add(w);
        all.push(w);
      }
    }
    this.words = all;
    this.ids = new Map(all.map((w, i) => [w, i]));
  }

  /** Every word seen at least minCount times (Moore & Lewis: the in-domain words seen twice or more). */
  static fromCounts(counts: ReadonlyMap<string, number>, minCount = 1): LmVocabulary {
    const words = [...counts].filter(([, c]) => c >= minCount).map(([w]) => w);
    return new LmVocabulary(words.sort());
  }

  get size(): number {
    return this.words.length;
  }

  id(word: string): number {
    return this.ids.get(word) ?? UNK_ID;
  }
}

/** Token counts of some texts (for LmVocabulary.fromCounts). */
export function countTokens(texts: Iterable<string>, into = new Map<string, number>()): Map<string, number> {
  for (const t of texts) for (const w of lmTokens(t)) into.set(w, (into.get(w) ?? 0) + 1);
  return into;
}

/**
 * A small Unicode-aware word tokenizer for length filters ("minimum 5 tokens", PLR). Input is
 * normalize()d first. Tokens, tried in this order at each position:
 *
 *  - an emoji: a flag (regional-indicator pair) or a pictograph with its modifiers, variation
 *    selectors and ZWJ continuations ("👨‍👩‍👧" and "👍🏽" are one token each);
 *  - one Han, Hiragana or Katakana character (these scripts have no spaces; one token per
 *    character, as sacrebleu's zh tokenizer does for Han; no dictionary segmentation);
 *  - a word: a run of letters and digits of any other script with their combining marks and
 *    ZWNJ/ZWJ, where an apostrophe (' ’), a hyphen (- ‐) between two word parts, and . or ,
 *    between two digits, stay inside ("don't", "state-of-the-art", "3.14", "1,000" are one
 *    token each). Thai, Lao, Khmer, Burmese (no spaces, no segmentation) come out as long runs;
 *  - one punctuation or symbol character (\p{P}, \p{S}) with any marks after it: a separate
 *    token, so "Hello, world!" is 4 tokens. This is how NLTK-style tokenizers count, which is
 *    what token minimums in the papers (MultiPIT: at least 5 tokens) are measured with.
 *
 * Whitespace, and anything left over (private-use, unassigned, stray format characters), is
 * skipped. tokenCount counts the tokens above; wordCount leaves out the punctuation/symbol ones.
 */
import { normalize } from './normalize.js';
import { CJK, EMOJI, TAIL, WORD_CHAR } from './patterns.js';

const WORD_UNIT = `${WORD_CHAR}[\\p{M}\\u200C\\u200D]*`;
const CONNECTOR = `(?:['\\u2019\\u2010\\-]|(?<=\\p{N})[.,](?=\\p{N}))`;
const WORD = `(?:${WORD_UNIT})+(?:${CONNECTOR}(?:${WORD_UNIT})+)*`;
const CJK_CHAR = `[${CJK}]${TAIL}`;
const PUNCT = `[\\p{P}\\p{S}]${TAIL}`;

/** Shared global regexes: every use resets lastIndex first and runs to completion (no re-entrancy). */
const TOKEN = new RegExp(`${EMOJI}|${CJK_CHAR}|${WORD}|${PUNCT}`, 'gv');
/** The same tokens minus punctuation/symbols (dropping that alternative cannot change the others). */
const WORD_TOKEN = new RegExp(`${EMOJI}|${CJK_CHAR}|${WORD}`, 'gv');

export function tokenize(text: string): string[] {
  const s = normalize(text);
  TOKEN.lastIndex = 0;
  const out: string[] = [];
  for (let m = TOKEN.exec(s); m !== null; m = TOKEN.exec(s)) out.push(m[0]);
  return out;
}

/** tokenize()'s tokens of `text` as it is (not normalized), with their UTF-16 offsets in it. */
export function tokenSpans(text: string): Array<{ text: string; start: number; end: number }> {
  TOKEN.lastIndex = 0;
  const out: Array<{ text: string; start: number; end: number }> = [];
  for (let m = TOKEN.exec(text); m !== null; m = TOKEN.exec(text)) {
    out.push({ text: m[0], start: m.index, end: m.index + m[0].length });
  }
  return out;
}

function count(re: RegExp, s: string): number {
  re.lastIndex = 0;
  let n = 0;
  while (re.exec(s) !== null) n++;
  return n;
}

/** Number of tokenize() tokens (words, CJK characters, emoji, punctuation/symbols). */
export function tokenCount(text: string): number {
  return count(TOKEN, normalize(text));
}

/** Number of tokens that are not punctuation or symbols (words, CJK characters, emoji). */
export function wordCount(text: string): number {
  return count(WORD_TOKEN, normalize(text));
}

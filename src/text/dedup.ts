/**
 * Dedup key: two sentences that differ only in case, punctuation, symbols, spacing, Unicode
 * normal form or compatibility form get the same key.
 *
 * dedupKey(text):
 *  1. normalize() (controls, zero-width characters, whitespace, NFC), then NFKC, so full-width
 *     "ＡＢＣ" = "ABC", "ﬁ" = "fi", "²" = "2";
 *  2. case: String.prototype.toLowerCase (locale-independent Unicode lower-casing; Turkish "I"
 *     becomes "i", "İ" becomes "i̇"), then "ς" → "σ" and "ß" → "ss", which brings it to Unicode
 *     full case folding for Greek and German ("STRASSE" = "Straße");
 *  3. deleted outright: apostrophes (' ’ ‘ ` ´), so "don't" = "dont" = "don’t"; ZWNJ/ZWJ;
 *     variation selectors (U+FE00–U+FE0F, so "❤️" = "❤") and emoji skin tones ("👍🏽" = "👍");
 *  4. kept as tokens: runs of letters/digits/marks of every script, each Han/Hiragana/Katakana
 *     character, and emoji (pictographs and flags) — emoji carry meaning in tweets, so "great 😀"
 *     and "great 😢" stay different. Everything else — punctuation \p{P}, all other symbols
 *     \p{S} (math, currency, modifier symbols), whitespace — only separates tokens;
 *  5. the tokens joined by one space.
 *
 * So "Hello,world" = "hello world", "state-of-the-art" = "state of the art", "我爱你" = "我 爱 你".
 * A text with nothing but punctuation/symbols/whitespace has the empty key "": callers should not
 * treat two empty keys as duplicates of each other. dedupKey(dedupKey(x)) === dedupKey(x).
 */
import { normalize } from './normalize.js';
import { CJK, EMOJI, WORD_CHAR } from './patterns.js';

const DROP = /['\u2018\u2019`\u00B4]|[\uFE00-\uFE0F]|[\u{1F3FB}-\u{1F3FF}]|\u200C|\u200D/gu;
const FOLD = /[ςß]/g;
const KEY_TOKEN = new RegExp(`${EMOJI}|[${CJK}]\\p{M}*|(?:${WORD_CHAR}\\p{M}*)+`, 'gv');
const NON_ASCII = /[\u0080-\uFFFF]/;

function fold(c: string): string {
  return c === 'ß' ? 'ss' : 'σ';
}

export function dedupKey(text: string): string {
  let s = normalize(text);
  s = NON_ASCII.test(s) ? s.normalize('NFKC').toLowerCase().replace(FOLD, fold) : s.toLowerCase();
  s = s.replace(DROP, '');
  KEY_TOKEN.lastIndex = 0;
  let key = '';
  for (let m = KEY_TOKEN.exec(s); m !== null; m = KEY_TOKEN.exec(s))
    key = key === '' ? m[0] : `${key} ${m[0]}`;
  return key;
}

/**
 * Text normalization applied to every sentence before it is stored, keyed or measured.
 *
 * normalize(text):
 *  1. lone UTF-16 surrogates become U+FFFD (what String.prototype.toWellFormed does);
 *  2. removed outright: C0/C1 control characters that are not whitespace, and invisible format
 *     characters that carry no text: U+00AD soft hyphen, U+180E Mongolian vowel separator,
 *     U+200B zero-width space, U+2060 word joiner, U+2061–U+2064 invisible operators,
 *     U+FEFF BOM / zero-width no-break space, and bidi marks and embeddings (U+061C, U+200E,
 *     U+200F, U+202A–U+202E, U+2066–U+2069). Removal (not a space) because these sit inside
 *     words ("foo\u200Bbar" is the word "foobar" on screen).
 *     Kept: U+200C ZWNJ and U+200D ZWJ (they change spelling in Persian/Indic scripts and glue
 *     emoji ZWJ sequences), variation selectors, emoji tag characters.
 *  3. every run of Unicode White_Space (space, tab, newlines, NBSP, U+2000–U+200A, U+2028/2029,
 *     U+202F, U+205F, U+3000, U+0085 …) becomes one ASCII space; leading/trailing space is trimmed;
 *  4. Unicode NFC (last, so that marks separated only by a removed character compose).
 *
 * The result is idempotent: normalize(normalize(x)) === normalize(x).
 * Case, punctuation and compatibility forms (full-width letters, ligatures) are left alone: that
 * is the dedup key's job (dedup.ts), not the stored text's.
 */

/** Already-normal text in the common case: printable ASCII words separated by single spaces. */
const CLEAN_ASCII = /^[!-~]+(?: [!-~]+)*$/;

// Control characters except the whitespace ones (U+0009–U+000D, U+0085 are White_Space),
// plus the invisible format characters listed above.
const REMOVE = new RegExp(
  '[\\u0000-\\u0008\\u000E-\\u001F\\u007F-\\u0084\\u0086-\\u009F' +
    '\\u00AD\\u061C\\u180E\\u200B\\u200E\\u200F\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u2069\\uFEFF]',
  'gu',
);
const WHITESPACE_RUN = /\p{White_Space}+/gu;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one (no `u` flag: code units). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function normalize(text: string): string {
  if (CLEAN_ASCII.test(text)) return text;
  let s = text.replace(LONE_SURROGATE, '\uFFFD').replace(REMOVE, '').replace(WHITESPACE_RUN, ' ');
  const start = s.charCodeAt(0) === 32 ? 1 : 0;
  const end = s.length > start && s.charCodeAt(s.length - 1) === 32 ? s.length - 1 : s.length;
  if (start !== 0 || end !== s.length) s = s.slice(start, end);
  return s.normalize('NFC');
}

/**
 * Length in Unicode code points of the normalized text: what Python's len() gives on NFC text,
 * which is how "each side >= 10 characters" (ParaTag) is meant. Emoji with modifiers or ZWJ
 * sequences count every code point (a grapheme count would be lower).
 */
export function charLength(text: string): number {
  const s = normalize(text);
  let surrogatePairs = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) surrogatePairs++;
  }
  return s.length - surrogatePairs;
}

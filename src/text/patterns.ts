/**
 * Regular-expression building blocks shared by the tokenizer and the dedup key. Sources, not
 * RegExp objects: each module compiles its own once at load time (never in a hot path).
 * All of them need the `v` flag (set subtraction), available since Node 20.
 */

/** Scripts written without spaces whose characters are tokens on their own (no dictionary). */
export const CJK = '\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}';

/** A letter or digit that starts or continues a word (anything but the CJK scripts above). */
export const WORD_CHAR = `[[\\p{L}\\p{N}]--[${CJK}]]`;

/** What follows a base character and belongs to it: combining marks (incl. variation selectors, keycap U+20E3), emoji skin tones, emoji tags. */
export const TAIL = '[\\p{M}\\p{Emoji_Modifier}\\u{E0020}-\\u{E007F}]*';

/** One emoji: a flag (regional-indicator pair) or a pictograph with its tail and ZWJ continuations. */
export const EMOJI = `\\p{RI}\\p{RI}|\\p{Extended_Pictographic}${TAIL}(?:\\u200D\\p{Extended_Pictographic}${TAIL})*`;

/**
 * The definition tagger: finds the term a sentence defines, as ParaSCI (Dong et al. 2021) grouped
 * definition sentences of the same term ("X is defined as …", "X refers to …", "we define X as …",
 * "… is called X", …). The term becomes a metadata value (`term`), so mining within a term's group pairs
 * two definitions of the same thing.
 *
 *   definitionOf('In this paper, coherence is defined as the degree of ...')
 *   // { term: 'coherence', start: 15, end: 24, pattern: 'is-defined-as' }
 *
 * Terms are noun phrases of at most MAX_TERM_WORDS words; pronouns and demonstratives ("it", "this") are
 * no terms. The key is the term lower-cased, without a leading article, quotes or a trailing
 * parenthesised abbreviation ("Bilingual Evaluation Understudy (BLEU)" -> "bilingual evaluation
 * understudy"), so differently cased mentions of one term share a group.
 */

export interface DefinitionMatch {
  /** The normalized term: the group key. */
  term: string;
  /** Character offsets of the term as written, [start, end). */
  start: number;
  end: number;
  /** Which pattern matched (see PATTERNS). */
  pattern: string;
}

/** Bump when the patterns change: group tables built from the tagger record it and refuse another. */
export const DEFINITION_TAGGER_VERSION = 1;

const MAX_TERM_WORDS = 6;
const ADVERB = '(?:\\w+ly\\s+)?';
const BE = '(?:is|are|was|were|can\\s+be|could\\s+be|will\\s+be|may\\s+be)';

/** Term before the cue: the words left of it. */
interface LeftPattern {
  name: string;
  side: 'left';
  cue: RegExp;
}
/** Term between the cue and a closing word, or after the cue up to a boundary. */
interface RightPattern {
  name: string;
  side: 'right';
  cue: RegExp;
  /** Where the term ends (exclusive) when it must end at a word ("we define X as"). */
  until?: RegExp;
}

const PATTERNS: ReadonlyArray<LeftPattern | RightPattern> = [
  { name: 'define-as', side: 'right', cue: /\bwe\s+(?:\w+ly\s+)?define\s+/i, until: /\s+(?:as|to\s+be)\b/i },
  {
    name: 'is-defined-as',
    side: 'left',
    cue: new RegExp(`\\s+${BE}\\s+${ADVERB}defined\\s+(?:as|to\\s+be|by)\\b`, 'i'),
  },
  { name: 'refers-to', side: 'left', cue: /\s+(?:refers|refer|referred)\s+to\b(?!\s+as)/i },
  { name: 'definition-of', side: 'right', cue: /\bthe\s+definition\s+of\s+/i, until: /\s+(?:is|are)\b/i },
  {
    name: 'is-called',
    side: 'right',
    cue: new RegExp(
      `\\b${BE}\\s+${ADVERB}(?:also\\s+)?(?:called|referred\\s+to\\s+as|known\\s+as|termed|dubbed|named)\\s+`,
      'i',
    ),
  },
  { name: 'means', side: 'left', cue: /\s+(?:means|denotes|stands\s+for)\b/i },
];

/** No term: pronouns, demonstratives and words that begin a clause rather than name a thing. */
const NOT_A_TERM = new Set([
  'it',
  'this',
  'that',
  'these',
  'those',
  'they',
  'which',
  'what',
  'he',
  'she',
  'we',
  'one',
  'each',
  'there',
  'here',
  'such',
  'above',
  'former',
  'latter',
  'following',
]);
/** Words that end a noun phrase to the right of a cue ("… is called X in the literature"). */
const RIGHT_STOP = new Set([
  'in',
  'by',
  'for',
  'and',
  'or',
  'which',
  'that',
  'where',
  'when',
  'because',
  'since',
  'as',
  'to',
  'from',
  'with',
  'of',
  'on',
  'at',
  'is',
  'are',
  'was',
  'were',
  'if',
  'while',
]);
/** Words that start a clause to the left of a term ("… and then X is defined as"). */
const LEFT_STOP = new Set([
  'and',
  'or',
  'but',
  'then',
  'thus',
  'so',
  'hence',
  'where',
  'when',
  'which',
  'that',
  'while',
  'if',
  'because',
  'here',
  'now',
  'therefore',
  'finally',
  'first',
  'second',
  'also',
  'we',
  'is',
  'are',
  'was',
  'were',
  'be',
]);
const ARTICLE = /^(?:the|a|an)\s+/i;
const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’\-_./]*/gu;

/** The term the sentence defines, if one of the patterns finds one. */
export function definitionOf(sentence: string): DefinitionMatch | undefined {
  for (const p of PATTERNS) {
    const m = p.cue.exec(sentence);
    if (m === null) continue;
    const found =
      p.side === 'left'
        ? termLeftOf(sentence, m.index)
        : termRightOf(sentence, m.index + m[0].length, p.until);
    if (found !== undefined) return { ...found, pattern: p.name };
  }
  return undefined;
}

type Span = Omit<DefinitionMatch, 'pattern'>;

/** The noun phrase ending at `end`: words back to a clause boundary, at most MAX_TERM_WORDS. */
function termLeftOf(sentence: string, end: number): Span | undefined {
  const head = sentence.slice(0, end);
  // A clause boundary: the last comma, colon, semicolon or opening bracket outside a trailing "(ABBR)".
  const stripped = head.replace(/\s*\([^()]*\)\s*$/, '');
  const cut = Math.max(...[',', ';', ':', '—', '–'].map((c) => stripped.lastIndexOf(c)));
  const words = [...stripped.slice(cut + 1).matchAll(WORD)].map((w) => ({
    text: w[0],
    start: cut + 1 + (w.index ?? 0),
  }));
  let from = words.length;
  while (from > 0 && !LEFT_STOP.has((words[from - 1] as { text: string }).text.toLowerCase())) from--;
  const picked = words.slice(Math.max(from, words.length - MAX_TERM_WORDS));
  if (picked.length === 0) return undefined;
  const first = picked[0] as { start: number };
  const last = picked.at(-1) as { text: string; start: number };
  return spanOf(sentence, first.start, last.start + last.text.length);
}

/** The noun phrase starting at `start`: up to `until`, or up to punctuation or a stop word. */
function termRightOf(sentence: string, start: number, until?: RegExp): Span | undefined {
  const tail = sentence.slice(start);
  if (until !== undefined) {
    const u = until.exec(tail);
    if (u === null) return undefined;
    const words = [...tail.slice(0, u.index).matchAll(WORD)];
    if (words.length === 0 || words.length > MAX_TERM_WORDS) return undefined;
    return spanOf(sentence, start + (words[0]?.index ?? 0), start + u.index);
  }
  // Quoted terms end at the closing quote.
  const quoted = /^["“'‘]([^"”'’]{1,80})["”'’]/.exec(tail);
  if (quoted) return spanOf(sentence, start + 1, start + 1 + (quoted[1] as string).length);
  const stop = tail.search(/[,;:.!?()[\]"“”]/);
  const phrase = stop < 0 ? tail : tail.slice(0, stop);
  const words = [...phrase.matchAll(WORD)];
  let n = 0;
  while (n < words.length && n < MAX_TERM_WORDS) {
    const w = (words[n] as RegExpMatchArray)[0].toLowerCase();
    if (n > 0 && RIGHT_STOP.has(w)) break;
    n++;
  }
  if (n === 0) return undefined;
  const last = words[n - 1] as RegExpMatchArray;
  return spanOf(sentence, start + (words[0]?.index ?? 0), start + (last.index ?? 0) + last[0].length);
}

/** Offsets of the phrase without a leading article, and its key; undefined for pronouns and the like. */
function spanOf(sentence: string, start: number, end: number): Span | undefined {
  let s = start;
  const raw = sentence.slice(start, end);
  const article = ARTICLE.exec(raw);
  if (article) s += article[0].length;
  const text = sentence.slice(s, end).replace(/\s*\([^()]*\)\s*$/, '');
  const e = s + text.length;
  const term = termKey(text);
  if (term === '' || NOT_A_TERM.has(term.split(' ')[0] as string)) return undefined;
  return { term, start: s, end: e };
}

/** The group key of a term as written: lower case, single spaces, no quotes or article. */
export function termKey(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/["“”‘’]/g, '')
    .replace(ARTICLE, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Sentence splitting for document input: Intl.Segmenter's sentence granularity (ICU's rules, in the
 * document's language) with ICU's own remedy for its best-known fault added back. Node's ICU segments
 * without the locale's break suppressions (`ss=standard` is ignored there), so "Dr. Smith" and "Jan. 5"
 * break after the period; a break right after a listed abbreviation is undone, as ICU's suppressions
 * would; so is a break between a quoted question and the lower-case words that go on after it ("Where
 * is it?" she asked.). Blank lines always end a sentence (paragraphs). Each sentence keeps its character offsets in the
 * document, so `text.slice(start, end)` is the sentence as written.
 */

export interface SentenceSpan {
  /** The sentence with its whitespace runs (line breaks inside it too) as single spaces. */
  text: string;
  /** UTF-16 offsets in the document: [start, end). */
  start: number;
  end: number;
}

// Abbreviations after which a period does not end a sentence (ICU's suppression lists are of this kind).
const ABBREVIATIONS: Record<string, readonly string[]> = {
  en: [
    'Mr',
    'Mrs',
    'Ms',
    'Dr',
    'Prof',
    'Sr',
    'Jr',
    'St',
    'Mt',
    'Gen',
    'Gov',
    'Sen',
    'Rep',
    'Rev',
    'Capt',
    'Col',
    'Lt',
    'Sgt',
    'Hon',
    'No',
    'Nos',
    'vs',
    'cf',
    'al',
    'approx',
    'dept',
    'est',
    'fig',
    'Fig',
    'eq',
    'Eq',
    'Jan',
    'Feb',
    'Mar',
    'Apr',
    'Jun',
    'Jul',
    'Aug',
    'Sep',
    'Sept',
    'Oct',
    'Nov',
    'Dec',
    'e.g',
    'i.e',
    'a.m',
    'p.m',
    'U.S',
    'U.K',
    'Inc',
    'Ltd',
    'Co',
    'Corp',
    'vol',
    'Vol',
    'pp',
    'ch',
    'Ch',
    'sec',
    'Sec',
  ],
  fi: [
    'esim',
    'ym',
    'yms',
    'mm',
    'ns',
    'jne',
    'tms',
    'vrt',
    'ks',
    'n',
    'noin',
    'v',
    'klo',
    'prof',
    'Prof',
    'tri',
    'Tri',
    'Dos',
    'dos',
    'os',
    'puh',
    'mrd',
    'milj',
    'ts',
    'eaa',
    'jaa',
    'eKr',
    'jKr',
    'nk',
    'ko',
    'em',
  ],
};

const languageOf = (lang: string): string => (lang.split(/[-_]/)[0] ?? 'en').toLowerCase();

function suppressed(lang: string): Set<string> {
  return new Set(ABBREVIATIONS[languageOf(lang)] ?? ABBREVIATIONS.en);
}

/** The word before a final period of `segment` (trailing spaces aside), e.g. "Dr" for "… Dr. ". */
function wordBeforePeriod(segment: string): string | undefined {
  const m = /([\p{L}.]+)\.\s*$/u.exec(segment);
  return m?.[1];
}

/** Sentences of one paragraph (no blank lines inside), offsets relative to `base`. */
function paragraphSentences(
  text: string,
  base: number,
  segmenter: Intl.Segmenter,
  abbr: Set<string>,
): SentenceSpan[] {
  const out: SentenceSpan[] = [];
  let start: number | undefined;
  let end = 0;
  // A line break inside a paragraph is hard wrapping, not a sentence end (ICU breaks at every one); a
  // space in its place keeps the offsets.
  const segments = [...segmenter.segment(text.replace(/\r?\n/g, (m) => ' '.repeat(m.length)))];
  for (const [i, { segment, index }] of segments.entries()) {
    start ??= index;
    end = index + segment.length;
    const word = wordBeforePeriod(segment);
    // An initial ("J. Smith") or a listed abbreviation: the sentence goes on.
    if (word !== undefined && (abbr.has(word) || /^\p{Lu}$/u.test(word))) continue;
    // A quoted question or exclamation followed by lower case ("Where?" she asked.): one sentence.
    if (/[?!][\p{Pf}\p{Pe}"']*\s*$/u.test(segment) && /^\s*\p{Ll}/u.test(segments[i + 1]?.segment ?? ''))
      continue;
    push(out, text, start, end, base);
    start = undefined;
  }
  if (start !== undefined) push(out, text, start, end, base);
  return out;
}

function push(out: SentenceSpan[], text: string, start: number, end: number, base: number): void {
  const raw = text.slice(start, end);
  const lead = raw.length - raw.trimStart().length;
  const trimmed = raw.trim();
  if (trimmed === '') return;
  const s = base + start + lead;
  out.push({ text: trimmed.replace(/\s+/g, ' '), start: s, end: s + trimmed.length });
}

/** The sentences of a document, in order, with their offsets. `lang`: a BCP 47 tag (default English). */
export function splitSentences(text: string, lang = 'en'): SentenceSpan[] {
  const segmenter = new Intl.Segmenter(lang, { granularity: 'sentence' });
  const abbr = suppressed(lang);
  const out: SentenceSpan[] = [];
  // Paragraphs: runs of text between blank lines.
  const para = /[^\n]*\S[^\n]*(?:\n(?!\s*\n)[^\n]*)*/g;
  for (const m of text.matchAll(para)) {
    out.push(...paragraphSentences(m[0], m.index ?? 0, segmenter, abbr));
  }
  return out;
}

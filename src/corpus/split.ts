/**
 * Sentence splitting for document input: Intl.Segmenter's sentence granularity (ICU's rules, in the
 * document's language) with ICU's own remedy for its best-known fault added back. Node's ICU segments
 * without the locale's break suppressions (`ss=standard` is ignored there), so "Dr. Smith" and "Jan. 5"
 * break after the period; a break right after a listed abbreviation is undone, as ICU's suppressions
 * would, except after the English ones that often end a sentence ("p.m.", "U.S.") when a capitalized word
 * follows; a break after an initial is undone unless a sentence plainly starts ("Plan B. Then"); a quotation
 * whose sentences end in `," Chen said` stays one sentence; so does a quoted question followed by lower case
 * ("Where is it?" she asked.). Abbreviation lists exist for English and Finnish only; other languages get
 * ICU's breaks. Blank lines always end a sentence (paragraphs). Every step is linear in the text's length.
 * Each sentence keeps its character offsets in the document, so `text.slice(start, end)` is the sentence as
 * written.
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

/**
 * English abbreviations that often end a sentence ("at 2 p.m. Markets rallied", "in the U.S. Analysts
 * expect"): a break after one stands when a capitalized word follows, unless that word is one these
 * abbreviations are often followed by in mid-sentence ("U.S. Senate", "9 a.m. Monday").
 */
const MAY_END: Record<string, ReadonlySet<string>> = {
  en: new Set(['a.m', 'p.m', 'U.S', 'U.K', 'Inc', 'Ltd', 'Co', 'Corp', 'etc', 'Jr', 'Sr', 'Dept', 'D.C']),
};
const GOES_ON_AFTER: Record<string, ReadonlySet<string>> = {
  en: new Set([
    // after a time
    ...['EST', 'EDT', 'CST', 'CDT', 'MST', 'MDT', 'PST', 'PDT', 'ET', 'CT', 'PT', 'GMT', 'UTC', 'BST', 'CET'],
    ...['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'],
    // after U.S. / U.K.
    ...['Senate', 'House', 'President', 'Congress', 'Army', 'Navy', 'Air', 'Marine', 'Marines', 'Coast'],
    ...['Department', 'Embassy', 'Government', 'Supreme', 'Federal', 'Treasury', 'Court', 'Open', 'State'],
    ...[
      'Secretary',
      'Attorney',
      'Ambassador',
      'Census',
      'Border',
      'Customs',
      'Geological',
      'Forest',
      'Postal',
    ],
    ...[
      'Central',
      'Food',
      'Energy',
      'Olympic',
      'National',
      'Justice',
      'Defense',
      'Commerce',
      'Labor',
      'Trade',
    ],
    ...['Parliament', 'Prime', 'Home', 'Foreign', 'Ministry', 'Office', 'Open', 'Embassy', 'Capitol'],
  ]),
};
/**
 * Words that start sentences far more often than they follow an initial: "Plan B. Then ..." breaks where
 * "John F. Kennedy" does not.
 */
const STARTERS = new Set([
  ...['The', 'A', 'An', 'It', 'He', 'She', 'They', 'We', 'I', 'You', 'This', 'That', 'These', 'Those'],
  ...['Then', 'There', 'But', 'And', 'So', 'Or', 'If', 'When', 'While', 'After', 'Before', 'As', 'In'],
  ...['On', 'At', 'For', 'To', 'With', 'From', 'By', 'Our', 'His', 'Her', 'Its', 'Their', 'My', 'Your'],
  ...['However', 'Still', 'Yet', 'Now', 'Later', 'Meanwhile', 'Some', 'Many', 'Most', 'All', 'No'],
]);

const languageOf = (lang: string): string => (lang.split(/[-_]/)[0] ?? 'en').toLowerCase();

/** What a language's text knows of its abbreviations: only the languages listed (others: ICU alone). */
interface Rules {
  abbr: ReadonlySet<string>;
  mayEnd: ReadonlySet<string>;
  goesOn: ReadonlySet<string>;
}

function rulesOf(lang: string): Rules {
  const l = languageOf(lang);
  const none = new Set<string>();
  return {
    abbr: new Set(ABBREVIATIONS[l] ?? []),
    mayEnd: MAY_END[l] ?? none,
    goesOn: GOES_ON_AFTER[l] ?? none,
  };
}

const isSpace = (c: string | undefined) => c !== undefined && /\s/.test(c);
const WORD_CHAR = /[\p{L}.]/u;

/**
 * The word before a final period of `segment` (trailing spaces aside), e.g. "Dr" for "… Dr. ", walked back
 * character by character (at most 24): a pattern anchored at the end would rescan long runs of letters.
 */
function wordBeforePeriod(segment: string): string | undefined {
  let e = segment.length;
  while (e > 0 && isSpace(segment[e - 1])) e--;
  if (segment[e - 1] !== '.') return undefined;
  let s = e - 1;
  while (s > 0 && e - 1 - s < 24 && WORD_CHAR.test(segment[s - 1] as string)) s--;
  return s < e - 1 ? segment.slice(s, e - 1) : undefined;
}

/** The first word of `text` (after spaces and opening quotes), or ''. */
function firstWord(text: string): string {
  let i = 0;
  while (i < text.length && (isSpace(text[i]) || /[\p{Pi}\p{Ps}"']/u.test(text[i] as string))) i++;
  const m = /^[\p{L}\p{N}'’-]{1,40}/u.exec(text.slice(i, i + 40));
  return m?.[0] ?? '';
}

/** Whether a segment ends with ? or ! (closing quotes and brackets, then spaces, aside). */
function endsAsking(segment: string): boolean {
  let e = segment.length;
  while (e > 0 && (isSpace(segment[e - 1]) || /[\p{Pf}\p{Pe}"']/u.test(segment[e - 1] as string))) e--;
  return segment[e - 1] === '?' || segment[e - 1] === '!';
}

/** How far past a break an attributed quote's closing `,"` is looked for. */
const QUOTE_REACH = 2000;

/**
 * Inside a quotation that goes on past this break and closes with a comma (`"We are thrilled. This is a
 * historic day," Chen said.`): the quoted sentences are one sentence with their attribution.
 */
function insideAttributedQuote(text: string, from: number, at: number): boolean {
  let open = false;
  for (let i = from; i < at; i++) {
    const c = text[i];
    if (c === '"') open = !open;
    else if (c === '“') open = true;
    else if (c === '”') open = false;
  }
  if (!open) return false;
  // An attribution follows within a few sentences: a quote never closed is not scanned to the end.
  for (let i = at; i < Math.min(text.length, at + QUOTE_REACH); i++) {
    const c = text[i];
    if (c === '"' || c === '”') return text[i - 1] === ',';
    if (c === '\n') return false;
  }
  return false;
}

/** Whether the break after `segment` is undone: an abbreviation, an initial, a quote that goes on. */
function goesOn(segment: string, next: string, rules: Rules): boolean {
  const word = wordBeforePeriod(segment);
  const following = firstWord(next);
  const capital = /^\p{Lu}/u.test(following);
  if (word !== undefined) {
    if (rules.mayEnd.has(word)) return !capital || rules.goesOn.has(following);
    if (rules.abbr.has(word)) return true;
    // An initial or initials ("J. Smith", "J.P. Morgan"), unless a sentence plainly starts after it.
    if (/^(\p{Lu}\.)*\p{Lu}$/u.test(word)) return !STARTERS.has(following);
  }
  // A quoted question or exclamation followed by lower case ("Where?" she asked.): one sentence.
  return endsAsking(segment) && /^\s*\p{Ll}/u.test(next);
}

/** Sentences of one paragraph (no blank lines inside), offsets relative to `base`. */
function paragraphSentences(
  text: string,
  base: number,
  segmenter: Intl.Segmenter,
  rules: Rules,
): SentenceSpan[] {
  const out: SentenceSpan[] = [];
  let start: number | undefined;
  let end = 0;
  // A line break inside a paragraph is hard wrapping, not a sentence end (ICU breaks at every one); a
  // space in its place keeps the offsets.
  const flat = text.replace(/\r?\n/g, (m) => ' '.repeat(m.length));
  let current: Segment | undefined;
  for (const following of segmentsOf(segmenter, flat)) {
    if (current !== undefined) {
      const { segment, index } = current;
      start ??= index;
      end = index + segment.length;
      if (!goesOn(segment, following.segment, rules) && !insideAttributedQuote(flat, start, end)) {
        push(out, text, start, end, base);
        start = undefined;
      }
    }
    current = following;
  }
  if (current !== undefined) {
    start ??= current.index;
    end = current.index + current.segment.length;
  }
  if (start !== undefined) push(out, text, start, end, base);
  return out;
}

interface Segment {
  segment: string;
  index: number;
}

/** Characters handed to ICU at a time (a window grows only for a sentence longer than it). */
const WINDOW = 8192;

/**
 * ICU's sentences of `text`, a window at a time. Node's Intl.Segmenter gives every segment its own copy
 * of the whole input (`input`), so one call on a long paragraph takes segments x length of memory: a
 * 425,000-character paragraph of 8,000 sentences took 3.2 GiB and 5 s, twice that ran out of heap. Each
 * window's last segment may be cut by the window's end, so the next window starts there.
 */
function* segmentsOf(segmenter: Intl.Segmenter, text: string): Generator<Segment> {
  let from = 0;
  let size = WINDOW;
  while (from < text.length) {
    const to = Math.min(text.length, from + size);
    const parts = Array.from(segmenter.segment(text.slice(from, to)), ({ segment, index }) => ({
      segment,
      index,
    }));
    const last = to === text.length;
    if (!last && parts.length < 2) {
      size *= 2;
      continue;
    }
    const keep = last ? parts.length : parts.length - 1;
    for (let i = 0; i < keep; i++) {
      const p = parts[i] as Segment;
      yield { segment: p.segment, index: from + p.index };
    }
    if (last) return;
    from += (parts[keep] as Segment).index;
    size = WINDOW;
  }
}

function push(out: SentenceSpan[], text: string, start: number, end: number, base: number): void {
  const raw = text.slice(start, end);
  const lead = raw.length - raw.trimStart().length;
  const trimmed = raw.trim();
  if (trimmed === '') return;
  const s = base + start + lead;
  out.push({ text: trimmed.replace(/\s+/g, ' '), start: s, end: s + trimmed.length });
}

/** Paragraphs: runs of lines between blank lines, as [start, end) offsets (one pass, no pattern). */
function paragraphs(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let start = -1;
  let end = -1;
  for (let at = 0; at <= text.length; ) {
    const nl = text.indexOf('\n', at);
    const lineEnd = nl < 0 ? text.length : nl;
    if (text.slice(at, lineEnd).trim() === '') {
      if (start >= 0) out.push([start, end]);
      start = -1;
    } else {
      if (start < 0) start = at;
      end = lineEnd;
    }
    if (nl < 0) break;
    at = nl + 1;
  }
  if (start >= 0) out.push([start, end]);
  return out;
}

/** The sentences of a document, in order, with their offsets. `lang`: a BCP 47 tag (default English). */
export function splitSentences(text: string, lang = 'en'): SentenceSpan[] {
  const segmenter = new Intl.Segmenter(lang, { granularity: 'sentence' });
  const rules = rulesOf(lang);
  const out: SentenceSpan[] = [];
  for (const [from, to] of paragraphs(text)) {
    out.push(...paragraphSentences(text.slice(from, to), from, segmenter, rules));
  }
  return out;
}

/**
 * Clauses and sub-sentence spans for the best-clause method (ParaSCI's baseline for sub-sentence
 * paraphrases): split the longer sentence at punctuation into clauses, and consider every contiguous run
 * of clauses as a span that may paraphrase the shorter sentence. The caller scores the runs (by the
 * encoder's cosine to the shorter sentence) and keeps the best; this module only cuts text and keeps
 * character offsets, so a pair can point at the exact substring.
 *
 *   const runs = clauseRuns('We train a tagger, which labels spans, and we evaluate it.');
 *   // [{start: 0, end: 17, text: 'We train a tagger'}, …, {start: 19, end: 37, …}, …]
 */

export interface TextSpan {
  /** Character offsets into the sentence, [start, end). */
  start: number;
  end: number;
  text: string;
}

/**
 * Clause boundaries: commas, semicolons, colons, dashes and brackets. Full stops are not ("et al.",
 * "e.g." would split), and the input is one sentence anyway.
 */
const BOUNDARY = /[,;:()[\]{}—–]|\s-\s/g;
/** What a clause must hold to count: a letter or a digit. */
const CONTENT = /[\p{L}\p{N}]/u;
/** Runs longer than this many clauses are not enumerated (quadratic in the clause count). */
export const MAX_CLAUSES = 16;

/** The clauses of a sentence with their offsets, trimmed of spaces and boundary punctuation. */
export function splitClauses(sentence: string): TextSpan[] {
  const out: TextSpan[] = [];
  let from = 0;
  const push = (start: number, end: number) => {
    let s = start;
    let e = end;
    while (s < e && /\s/.test(sentence[s] as string)) s++;
    while (e > s && /[\s.!?]/.test(sentence[e - 1] as string)) e--;
    if (s < e && CONTENT.test(sentence.slice(s, e)))
      out.push({ start: s, end: e, text: sentence.slice(s, e) });
  };
  for (const m of sentence.matchAll(BOUNDARY)) {
    const at = m.index ?? 0;
    push(from, at);
    from = at + m[0].length;
  }
  push(from, sentence.length);
  return out;
}

/**
 * Every contiguous run of clauses shorter than the whole sentence (the whole sentence is the ordinary
 * pair), each as one span from its first clause's start to its last clause's end. Sentences with more
 * than MAX_CLAUSES clauses keep runs of at most MAX_CLAUSES clauses.
 */
export function clauseRuns(sentence: string, options: { minChars?: number } = {}): TextSpan[] {
  const clauses = splitClauses(sentence);
  const minChars = options.minChars ?? 1;
  const out: TextSpan[] = [];
  const n = clauses.length;
  for (let i = 0; i < n; i++) {
    for (let j = i; j < n && j - i < MAX_CLAUSES; j++) {
      if (i === 0 && j === n - 1) continue;
      const start = (clauses[i] as TextSpan).start;
      const end = (clauses[j] as TextSpan).end;
      if (end - start < minChars) continue;
      out.push({ start, end, text: sentence.slice(start, end) });
    }
  }
  return out;
}

/** The span with the highest score (the first on ties), or undefined when there is none. */
export function bestSpan<T extends TextSpan>(
  spans: readonly T[],
  scores: ArrayLike<number>,
): { span: T; score: number } | undefined {
  let best = -1;
  for (let i = 0; i < spans.length; i++) {
    if (best < 0 || (scores[i] as number) > (scores[best] as number)) best = i;
  }
  return best < 0 ? undefined : { span: spans[best] as T, score: scores[best] as number };
}

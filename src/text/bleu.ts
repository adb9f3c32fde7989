/**
 * Sentence BLEU-4 exactly as sacrebleu 2.x `sentence_bleu(hyp, [ref])` computes it with its
 * defaults, on the 0–100 scale:
 *  - tokenizer '13a' (mteval-v13a): ASCII punctuation split off, except that '.' and ',' stay
 *    attached between digits, '-' is split only after a digit, and the apostrophe is never split.
 *    Non-ASCII punctuation (’ « » 。 ！) stays attached, exactly as in sacrebleu;
 *  - case-sensitive (option `lowercase` lower-cases both sides first, like sacrebleu's lowercase=True);
 *  - smoothing 'exp' (Chen & Cherry 2014 method 3, NIST): the k-th n-gram order with no match
 *    gets precision 1 / (2^k · total_n);
 *  - effective order: orders with no n-grams in the hypothesis (sentence shorter than n) are left
 *    out of the geometric mean instead of zeroing it;
 *  - no match at all (also: either side empty) → 0; brevity penalty exp(1 − r/c) when c < r.
 * Both sides are normalize()d first (NFC, whitespace, controls); on already-normalized text this
 * is byte-for-byte sacrebleu's input (it only rstrips).
 *
 * BLEU is asymmetric (precision over the hypothesis, brevity penalty). Pair filters are order-free
 * (MultiPIT keeps BLEU ≤ 14, ParaTag 5 < BLEU < 20), so symmetricBleu(a, b) is the mean of
 * BLEU(a→b) and BLEU(b→a); the clipped match counts are the same both ways, so it costs one count.
 */
import { normalize } from './normalize.js';

export const MAX_ORDER = 4;

const PUNCT_13A = /([{-~[-`\x20-&(-+:-@/])/g;
const PERIOD_COMMA_AFTER_NON_DIGIT = /([^0-9])([.,])/g;
const PERIOD_COMMA_BEFORE_NON_DIGIT = /([.,])([^0-9])/g;
const DASH_AFTER_DIGIT = /([0-9])(-)/g;
const SPACES = /\s+/;

/** sacrebleu's Tokenizer13a on one line, returning the tokens. */
export function tokenize13a(line: string): string[] {
  let s = line;
  if (s.includes('<skipped>')) s = s.replaceAll('<skipped>', '');
  if (s.includes('-\n')) s = s.replaceAll('-\n', '');
  if (s.includes('\n')) s = s.replaceAll('\n', ' ');
  if (s.includes('&')) {
    s = s.replaceAll('&quot;', '"').replaceAll('&amp;', '&').replaceAll('&lt;', '<').replaceAll('&gt;', '>');
  }
  s = ` ${s} `
    .replace(PUNCT_13A, ' $1 ')
    .replace(PERIOD_COMMA_AFTER_NON_DIGIT, '$1 $2 ')
    .replace(PERIOD_COMMA_BEFORE_NON_DIGIT, ' $1 $2')
    .replace(DASH_AFTER_DIGIT, '$1 $2 ');
  return s.split(SPACES).filter((t) => t !== '');
}

/** Clipped n-gram matches per order 1..MAX_ORDER: Σ min(count_a(g), count_b(g)); symmetric in a, b. */
export function ngramMatches(a: readonly string[], b: readonly string[]): number[] {
  const matches = new Array<number>(MAX_ORDER).fill(0);
  if (a.length === 0 || b.length === 0) return matches;
  // Intern tokens to small integers so that an n-gram is one number (base = vocabulary size + 1).
  const ids = new Map<string, number>();
  const intern = (toks: readonly string[]): number[] =>
    toks.map((t) => {
      let id = ids.get(t);
      if (id === undefined) {
        id = ids.size + 1;
        ids.set(t, id);
      }
      return id;
    });
  const ia = intern(a);
  const ib = intern(b);
  const base = ids.size + 1;
  const numeric = base ** MAX_ORDER <= Number.MAX_SAFE_INTEGER;
  for (let n = 1; n <= MAX_ORDER; n++) {
    if (a.length < n || b.length < n) break;
    const counts = new Map<number | string, number>();
    const key = (ids: number[], i: number): number | string => {
      if (!numeric) return ids.slice(i, i + n).join(',');
      let k = 0;
      for (let j = i; j < i + n; j++) k = k * base + (ids[j] as number);
      return k;
    };
    for (let i = 0; i + n <= ia.length; i++) {
      const k = key(ia, i);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    let m = 0;
    for (let i = 0; i + n <= ib.length; i++) {
      const k = key(ib, i);
      const c = counts.get(k);
      if (c !== undefined && c > 0) {
        counts.set(k, c - 1);
        m++;
      }
    }
    matches[n - 1] = m;
  }
  return matches;
}

/** sacrebleu's compute_bleu with smooth_method='exp', effective_order=True, one reference. */
export function bleuFromStats(matches: readonly number[], hypLen: number, refLen: number): number {
  if (!matches.some((m) => m > 0)) return 0;
  const bp = hypLen < refLen ? (hypLen > 0 ? Math.exp(1 - refLen / hypLen) : 0) : 1;
  let smooth = 1;
  let logSum = 0;
  let order = 0;
  for (let n = 1; n <= MAX_ORDER; n++) {
    const total = Math.max(0, hypLen - n + 1);
    if (total === 0) break;
    order = n;
    const correct = matches[n - 1] ?? 0;
    let p: number;
    if (correct === 0) {
      smooth *= 2;
      p = 100 / (smooth * total);
    } else {
      p = (100 * correct) / total;
    }
    logSum += Math.log(p);
  }
  return bp * Math.exp(logSum / order);
}

export interface BleuOptions {
  /** Lower-case both sides before tokenizing (sacrebleu lowercase=True). Default false. */
  lowercase?: boolean;
}

function prepare(text: string, lowercase: boolean): string[] {
  const s = normalize(text);
  return tokenize13a(lowercase ? s.toLowerCase() : s);
}

/** sacrebleu sentence_bleu(hypothesis, [reference]).score, 0–100. */
export function sentenceBleu(hypothesis: string, reference: string, options: BleuOptions = {}): number {
  const lc = options.lowercase ?? false;
  const h = prepare(hypothesis, lc);
  const r = prepare(reference, lc);
  return bleuFromStats(ngramMatches(h, r), h.length, r.length);
}

/** (BLEU(a→b) + BLEU(b→a)) / 2, 0–100: an order-free pair similarity. */
export function symmetricBleu(a: string, b: string, options: BleuOptions = {}): number {
  const lc = options.lowercase ?? false;
  const ta = prepare(a, lc);
  const tb = prepare(b, lc);
  const m = ngramMatches(ta, tb);
  return (bleuFromStats(m, ta.length, tb.length) + bleuFromStats(m, tb.length, ta.length)) / 2;
}

/**
 * The rerank half of the search core: every kept candidate scored by the cross-encoder, rows ordered by
 * the probability that the pair is a paraphrase (the summed probability of the scorer's positive labels,
 * see text/labels.ts), then the label and probability filters and the cut to k.
 *
 * With a calibration (config.json's `paramine.calibration`) that probability combines the cross-encoder with
 * the bi-encoder's cosine, p = sigmoid(w_logit * logit(P) + w_cosine * cosine + bias), and replaces the
 * cross-encoder's own in the candidate: positive labels share p, the others 1 - p, in their original
 * proportions, and the label is the arg-max of the result, so ordering, label filters and minProbability all
 * act on the calibrated value.
 */
import type { Calibration, PairScore, PairScorer } from '../models/ports.js';
import { labelAt, positiveProbability } from '../text/labels.js';
import { evaluateFilter, filterNeedsProbabilities } from './lexical.js';
import type { Candidate, SearchOptions } from './types.js';

const CLIP = 1e-6;

/** The calibrated P(paraphrase) of a pair whose cross-encoder P(paraphrase) is `p` and cosine `cosine`. */
export function calibrated(cal: Calibration, p: number, cosine: number): number {
  const q = Math.min(Math.max(p, CLIP), 1 - CLIP);
  const z = cal.w_logit * Math.log(q / (1 - q)) + cal.w_cosine * cosine + cal.bias;
  return 1 / (1 + Math.exp(-z));
}

/**
 * `score` with its positive labels rescaled to sum to `p` and the rest to 1 - p; the label again, cut at
 * `threshold` on p (the calibration's own cut; absent: the arg-max).
 */
export function rescaled(
  score: PairScore,
  positive: readonly string[],
  p: number,
  threshold?: number,
): PairScore {
  const labels = Object.keys(score.probabilities);
  const isPos = (l: string) => positive.includes(l);
  const old = positiveProbability(score.probabilities, positive);
  const share = (l: string, x: number) => {
    const [mass, from, n] = isPos(l)
      ? [p, old, labels.filter(isPos).length]
      : [1 - p, 1 - old, labels.filter((k) => !isPos(k)).length];
    return from > 0 ? (x / from) * mass : mass / n;
  };
  const probabilities: Record<string, number> = {};
  for (const l of labels) probabilities[l] = share(l, score.probabilities[l] ?? 0);
  return { label: labelAt(probabilities, positive, threshold), probabilities };
}

/** Scores every candidate in place and sorts each row by positive probability (stable: ties keep ANN order). */
export async function rerankRows(
  scorer: PairScorer,
  queries: readonly string[],
  rows: Candidate[][],
  signal?: AbortSignal,
): Promise<void> {
  const pairs = rows.flatMap((row, q) => row.map((c) => [queries[q] as string, c.text] as const));
  const scores = await scorer.score(pairs, signal);
  const cal = scorer.calibration;
  let s = 0;
  for (const row of rows) {
    for (const c of row) {
      let score = scores[s++] as PairScore;
      if (cal) {
        const p = positiveProbability(score.probabilities, scorer.positiveLabels);
        score = rescaled(score, scorer.positiveLabels, calibrated(cal, p, c.cosine), cal.threshold);
      }
      c.label = score.label;
      c.probabilities = score.probabilities;
    }
    const p = (c: Candidate) => positiveProbability(c.probabilities ?? {}, scorer.positiveLabels);
    // A model whose order lowered top-1 on validation labels the candidates but leaves the cosine order.
    if (scorer.rerankOrder !== 'cosine') row.sort((a, b) => p(b) - p(a));
    row.forEach((c, i) => {
      c.rerankRank = i + 1;
    });
  }
}

/** The `labels`, `minProbability` and probability-bound filters, then at most k candidates. */
export function finalCandidates(
  query: string,
  row: readonly Candidate[],
  options: SearchOptions,
): Candidate[] {
  const probabilityBounds = filterNeedsProbabilities(options.filter);
  return row
    .filter(
      (c) =>
        !probabilityBounds ||
        evaluateFilter(query, c.text, options.filter, c.lexical, c.probabilities) === true,
    )
    .filter(
      (c) => options.labels === undefined || (c.label !== undefined && options.labels.includes(c.label)),
    )
    .filter((c) => {
      if (options.minProbability === undefined || c.label === undefined || c.probabilities === undefined)
        return true;
      return (c.probabilities[c.label] ?? 0) >= options.minProbability;
    })
    .slice(0, options.k);
}

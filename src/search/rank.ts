/**
 * The rerank half of the search core: every kept candidate scored by the cross-encoder, rows ordered by
 * the probability that the pair is a paraphrase (the summed probability of the scorer's positive labels,
 * see text/labels.ts), then the label and probability filters and the cut to k.
 *
 * With a calibration (config.json's `paramine.calibration`) the order follows
 * sigmoid(w_logit * logit(P) + w_cosine * cosine + bias) instead, fitted on retrieval candidates so that
 * reranking lowers top-1 on no validation set. It orders only: that value is the chance of being a query's one
 * gold paraphrase among its candidates (a few percent at best), not P(paraphrase), so the label (cut at the
 * model's validated threshold), the reported probabilities and the filters keep the scorer's P (the model's
 * label-calibrated one where it has a `paramine.label_calibration`: src/rerank/core.ts).
 */
import type { Calibration, PairScore, PairScorer, ScoreOptions } from '../models/ports.js';
import { positiveProbability } from '../text/labels.js';
import { evaluateFilter, filterNeedsProbabilities } from './lexical.js';
import { type Candidate, keptLabels, type SearchOptions } from './types.js';

const CLIP = 1e-6;

/** The calibrated rank score of a pair whose cross-encoder P(paraphrase) is `p` and cosine `cosine`. */
export function calibrated(cal: Calibration, p: number, cosine: number): number {
  const q = Math.min(Math.max(p, CLIP), 1 - CLIP);
  const z = cal.w_logit * Math.log(q / (1 - q)) + cal.w_cosine * cosine + cal.bias;
  return 1 / (1 + Math.exp(-z));
}

/** Scores every candidate in place and sorts each row by its rank score (stable: ties keep ANN order). */
export async function rerankRows(
  scorer: PairScorer,
  queries: readonly string[],
  rows: Candidate[][],
  signal?: AbortSignal,
  options: ScoreOptions = {},
): Promise<void> {
  const pairs = rows.flatMap((row, q) => row.map((c) => [queries[q] as string, c.text] as const));
  const scores = await scorer.score(pairs, signal, options);
  const cal = scorer.calibration;
  const p = (c: Candidate) => positiveProbability(c.probabilities ?? {}, scorer.positiveLabels);
  const rank = new Map<Candidate, number>();
  let s = 0;
  for (const row of rows) {
    for (const c of row) {
      const score = scores[s++] as PairScore;
      c.label = score.label;
      c.probabilities = score.probabilities;
      if (score.model !== undefined) c.labeledBy = score.model;
      rank.set(c, cal ? calibrated(cal, p(c), c.cosine) : p(c));
    }
    // A model whose order lowered top-1 on validation labels the candidates but leaves the cosine order.
    if (scorer.rerankOrder !== 'cosine') row.sort((a, b) => (rank.get(b) ?? 0) - (rank.get(a) ?? 0));
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
  const keep = keptLabels(options);
  return row
    .filter(
      (c) =>
        !probabilityBounds ||
        evaluateFilter(query, c.text, options.filter, c.lexical, c.probabilities) === true,
    )
    .filter((c) => keep === undefined || (c.label !== undefined && keep.includes(c.label)))
    .filter((c) => {
      if (options.minProbability === undefined || c.label === undefined || c.probabilities === undefined)
        return true;
      return (c.probabilities[c.label] ?? 0) >= options.minProbability;
    })
    .slice(0, options.k);
}

/**
 * The rerank half of the search core: every kept candidate scored by the cross-encoder, rows ordered by
 * the probability that the pair is a paraphrase (the summed probability of the scorer's positive labels,
 * see text/labels.ts), then the label and probability filters and the cut to k.
 */
import type { PairScore, PairScorer } from '../models/ports.js';
import { positiveProbability } from '../text/labels.js';
import { evaluateFilter, filterNeedsProbabilities } from './lexical.js';
import type { Candidate, SearchOptions } from './types.js';

/** Scores every candidate in place and sorts each row by positive probability (stable: ties keep ANN order). */
export async function rerankRows(
  scorer: PairScorer,
  queries: readonly string[],
  rows: Candidate[][],
  signal?: AbortSignal,
): Promise<void> {
  const pairs = rows.flatMap((row, q) => row.map((c) => [queries[q] as string, c.text] as const));
  const scores = await scorer.score(pairs, signal);
  let s = 0;
  for (const row of rows) {
    for (const c of row) {
      const score = scores[s++] as PairScore;
      c.label = score.label;
      c.probabilities = score.probabilities;
    }
    const p = (c: Candidate) => positiveProbability(c.probabilities ?? {}, scorer.positiveLabels);
    row.sort((a, b) => p(b) - p(a));
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

/**
 * A job's pairs in the order a reviewer should judge them: the least sure labels first (|P(paraphrase) - the
 * labeling model's cut| smallest), since those are the annotations that move an index's calibration and cut
 * most. Within 0.01 of sureness, pairs from documents (or groups) not yet shown come first, so the first
 * hundred do not all come from one long article. Reads the job's pairs once, keeping only the best `offset +
 * limit` in memory.
 */

import { positiveProbability } from '../text/labels.js';
import type { MinedPair } from './store.js';

export interface ReviewOptions {
  offset: number;
  limit: number;
  /** The label cut of each labeling model (by name); pairs without probabilities are not reviewed. */
  cuts: Readonly<Record<string, number>>;
  /** The cut of a pair that names no model (jobs written before pairs named theirs). */
  defaultCut: number | undefined;
  positiveLabels: readonly string[];
  /** The metadata key whose values count as one document or group (default `doc`). */
  groupKey?: string | undefined;
}

export interface ReviewItem {
  seq: number;
  pair: MinedPair;
  /** |P(paraphrase) - cut|: 0 is a coin toss at the cut. */
  margin: number;
  cut: number;
}

/** The pairs to review, least sure first (see the module comment). */
export function reviewOrder(
  pairs: Iterable<{ seq: number; pair: MinedPair }>,
  o: ReviewOptions,
): ReviewItem[] {
  const keep = o.offset + o.limit;
  const best: ReviewItem[] = [];
  for (const { seq, pair } of pairs) {
    if (!pair.probabilities) continue;
    const cut = (pair.labeledBy !== undefined ? o.cuts[pair.labeledBy] : undefined) ?? o.defaultCut;
    if (cut === undefined) continue;
    const p = positiveProbability(pair.probabilities, o.positiveLabels);
    const item = { seq, pair, margin: Math.abs(p - cut), cut };
    if (best.length === keep && item.margin >= (best[keep - 1] as ReviewItem).margin) continue;
    best.splice(insertAt(best, item.margin), 0, item);
    if (best.length > keep) best.pop();
  }
  return diversified(best, o.groupKey ?? 'doc').slice(o.offset, keep);
}

function insertAt(sorted: readonly ReviewItem[], margin: number): number {
  let [lo, hi] = [0, sorted.length];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as ReviewItem).margin <= margin) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Within each 0.01 band of sureness, pairs whose documents were seen least often so far go first. */
function diversified(items: ReviewItem[], key: string): ReviewItem[] {
  const seen = new Map<string, number>();
  const groupsOf = (it: ReviewItem) =>
    [it.pair.a.meta?.[key], it.pair.b.meta?.[key]].filter((v) => v !== undefined && v !== null).map(String);
  const out: ReviewItem[] = [];
  for (let i = 0; i < items.length; ) {
    const band = Math.floor((items[i] as ReviewItem).margin * 100);
    let j = i;
    while (j < items.length && Math.floor((items[j] as ReviewItem).margin * 100) === band) j++;
    const pending = items.slice(i, j);
    while (pending.length > 0) {
      const times = (it: ReviewItem) => Math.max(0, ...groupsOf(it).map((g) => seen.get(g) ?? 0));
      let pick = 0;
      for (let k = 1; k < pending.length; k++)
        if (times(pending[k] as ReviewItem) < times(pending[pick] as ReviewItem)) pick = k;
      const [it] = pending.splice(pick, 1) as [ReviewItem];
      for (const g of groupsOf(it)) seen.set(g, (seen.get(g) ?? 0) + 1);
      out.push(it);
    }
    i = j;
  }
  return out;
}

/**
 * Drift (issue #30): how well the build's trained quantizers fit the sentences sealed since, against
 * their fit to the build's own vectors, and whether `paramine index --rebuild` would pay.
 */
import { joinFits, type SegmentFit, type SegmentInfo } from '../index/index.js';

/** Drift rule: a rebuild pays when the added vectors' quantization error passes the build's by half again, or their self-recall drops by 5 points. */
const DRIFT_ERROR_RATIO = 1.5;
const DRIFT_SELF_RECALL_DROP = 0.05;

export interface Drift {
  base: SegmentFit;
  added: SegmentFit;
  /** True when the added sentences fit clearly worse than the build's own: a rebuild would pay. */
  retrain: boolean;
  reason: string;
}

/**
 * The sealed segments' fit (weighted by their sizes) beside the build's; null before both are known.
 * `folded`: the fit of sentences a compaction folded into the shards without retraining (still drift).
 */
export function driftOf(
  base: SegmentFit | undefined,
  segments: readonly SegmentInfo[],
  folded?: SegmentFit,
): Drift | null {
  const fits = segments.flatMap((x) => (x.fit ? [x.fit] : []));
  if (folded !== undefined) fits.push(folded);
  const added = joinFits(fits);
  if (base === undefined || added === undefined) return null;
  const worseError = added.error > base.error * DRIFT_ERROR_RATIO && added.error - base.error > 1e-4;
  const worseRecall = base.selfRecall - added.selfRecall > DRIFT_SELF_RECALL_DROP;
  const retrain = worseError || worseRecall;
  const fit = `(error ${added.error.toFixed(4)} vs ${base.error.toFixed(4)}, self-recall ${added.selfRecall.toFixed(3)} vs ${base.selfRecall.toFixed(3)})`;
  const reason = retrain
    ? `the added sentences fit the trained quantizers worse than the build's own ${fit}: \`paramine index --rebuild\` would pay`
    : `the added sentences fit the trained quantizers as well as the build's own ${fit}`;
  return { base, added, retrain, reason };
}

/**
 * A label calibration from an index's own annotations (`paramine annotations threshold --calibrate`): Platt
 * scaling of P(paraphrase) as the page showed it against the annotators' majority. The model card's calibration
 * (training/paramine_train/label_calibration.py) is fitted on tweets and news at once; the annotations are the
 * user's domain. The stored P is already on the model's reported scale, so the fit composes with the model's
 * own calibration, and the rerank order's weights are carried over so the order does not move.
 */
import type { Calibration, LabelCalibration } from '../models/ports.js';
import type { Scored } from './report.js';

const CLIP = 1e-6;
const logit = (p: number) => {
  const q = Math.min(Math.max(p, CLIP), 1 - CLIP);
  return Math.log(q / (1 - q));
};
const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

/** (a, b) minimizing the log-loss of sigmoid(a * logit(score) + b) (damped Newton; a tiny ridge). */
export function fitPlatt(scored: readonly Scored[]): LabelCalibration {
  const z = scored.map((s) => logit(s.score));
  const y = scored.map((s) => (s.gold ? 1 : 0));
  const ridge = 1e-6;
  const loss = (a: number, b: number) =>
    z.reduce(
      (l, zi, i) => {
        const m = a * zi + b;
        return l + Math.max(m, 0) + Math.log1p(Math.exp(-Math.abs(m))) - (y[i] as number) * m;
      },
      (ridge / 2) * (a * a + b * b),
    );
  let a = 1;
  let b = 0;
  for (let it = 0; it < 200; it++) {
    let [ga, gb, haa, hab, hbb] = [ridge * a, ridge * b, ridge, 0, ridge];
    z.forEach((zi, i) => {
      const p = sigmoid(a * zi + b);
      const r = p - (y[i] as number);
      const w = p * (1 - p);
      ga += r * zi;
      gb += r;
      haa += w * zi * zi;
      hab += w * zi;
      hbb += w;
    });
    const det = haa * hbb - hab * hab;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    const f = loss(a, b);
    let t = 1;
    while (loss(a - t * da, b - t * db) > f && t > 1e-8) t /= 2;
    a -= t * da;
    b -= t * db;
    if (Math.max(Math.abs(t * da), Math.abs(t * db)) < 1e-10) break;
  }
  return { a, b };
}

/** `outer` applied after `inner` (absent: the identity), as one map of the model's logit. */
export function composePlatt(inner: LabelCalibration | undefined, outer: LabelCalibration): LabelCalibration {
  const { a, b } = inner ?? { a: 1, b: 0 };
  return { a: outer.a * a, b: outer.a * b + outer.b };
}

/**
 * The rerank order's weights (on the logit of the reported P) carried from one reported scale to another, so
 * the order stays what it was: logit(P_old) = a0 z + b0 and logit(P_new) = a1 z + b1 of the model's logit z.
 */
export function rescaleRanking<C extends Calibration>(
  cal: C,
  old: LabelCalibration | undefined,
  next: LabelCalibration,
): C {
  const { a: a0, b: b0 } = old ?? { a: 1, b: 0 };
  const w = cal.w_logit;
  return { ...cal, w_logit: (w * a0) / next.a, bias: cal.bias + w * (b0 - (a0 * next.b) / next.a) };
}

/** The scores as the calibrated copy would show them. */
export function recalibrated(scored: readonly Scored[], fit: LabelCalibration): Scored[] {
  return scored.map((s) => ({ ...s, score: sigmoid(fit.a * logit(s.score) + fit.b) }));
}

/**
 * Out-of-fold calibrated scores: each of `folds` interleaved parts scored by the fit on the others, so the
 * reliability of the map is judged on pairs it was not fitted on (a fit on few pairs flatters itself).
 */
export function crossFitted(scored: readonly Scored[], folds = 5): Scored[] {
  const k = Math.max(2, Math.min(folds, scored.length));
  const out: Scored[] = new Array(scored.length);
  for (let f = 0; f < k; f++) {
    const train = scored.filter((_, i) => i % k !== f);
    const fit = fitPlatt(train);
    scored.forEach((s, i) => {
      if (i % k === f) out[i] = { ...s, score: sigmoid(fit.a * logit(s.score) + fit.b) };
    });
  }
  return out;
}

/** One bin of a reliability diagram: pairs whose P falls in [lo, hi). */
export interface ReliabilityBin {
  lo: number;
  hi: number;
  n: number;
  meanP: number;
  observed: number;
}

export interface Reliability {
  /** Expected calibration error: the pair-weighted mean |mean P - observed share| over the bins. */
  ece: number;
  /** Mean squared error of P against 0/1. */
  brier: number;
  bins: ReliabilityBin[];
}

/**
 * Reliability of probabilities `p` against binary truths over `nBins` equal-width bins (the last one takes
 * 1.0): the figures of training/paramine_train/label_calibration.py, so a model card's ECE can be checked here.
 */
export function reliability(p: readonly number[], truth: readonly boolean[], nBins = 10): Reliability {
  const sums = Array.from({ length: nBins }, () => ({ n: 0, p: 0, pos: 0 }));
  let brier = 0;
  p.forEach((x, i) => {
    const bin = sums[Math.min(Math.floor(x * nBins), nBins - 1)] as { n: number; p: number; pos: number };
    const y = truth[i] ? 1 : 0;
    bin.n++;
    bin.p += x;
    bin.pos += y;
    brier += (x - y) ** 2;
  });
  const bins = sums.flatMap((b, k) =>
    b.n === 0
      ? []
      : [{ lo: k / nBins, hi: (k + 1) / nBins, n: b.n, meanP: b.p / b.n, observed: b.pos / b.n }],
  );
  const n = Math.max(1, p.length);
  const ece = bins.reduce((e, b) => e + (b.n / n) * Math.abs(b.meanP - b.observed), 0);
  return { ece, brier: brier / n, bins };
}

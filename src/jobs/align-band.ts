/**
 * The band of `docs align` chosen from the data: each document's nearest compatible partner scores high when
 * it has a true partner and low when it has none, so those scores form two modes where the corpus has both
 * kinds, and the band's lower edge belongs in the gap between them. Two modes are accepted when a mixture of two
 * Gaussians (EM) explains the scores clearly better than one (BIC) and its components stand apart (Ashman's D);
 * the edge is the middle of the widest gap between scores near where the components cross. A further mode of
 * near copies above 0.85 sets the upper edge the same way. Without such modes the defaults stay. A big corpus
 * (1,000 documents on) whose lower mode is its biggest takes the tail rule's edge instead (tailSplit): the
 * score above which a fit of the no-partner mode leaves 90% of the documents to real partners.
 */

/** The band when the data proposes none. */
export const DEFAULT_BAND = { min: 0.1, max: 0.95 } as const;
/** Two modes: the two-Gaussian mixture beats one Gaussian by this much BIC (strong evidence, Kass & Raftery) … */
const EVIDENCE = 10;
/** … and its components are this far apart (Ashman's D: |μ1 − μ2| √2 / √(σ1² + σ2²)). */
const SEPARATED = 2;
/** A mode needs at least this many documents (and this share of them). */
const MIN_MODE = 3;
const MIN_SHARE = 0.05;
/** Near copies: the upper mode's lowest score at least this. */
const COPIES_FROM = 0.85;

export interface ScoreBin {
  lo: number;
  hi: number;
  n: number;
}

export interface Split {
  /** Where the band's edge goes: the middle of the gap between the two modes, or where the tail begins. */
  at: number;
  /** 'tail' (tailSplit): one no-partner mode with a tail of partners, `precision` the share estimated real above `at`. */
  kind?: 'modes' | 'tail';
  precision?: number;
  /** Ashman's D of the two modes, and the BIC the second mode gains (both higher: clearer). */
  separation: number;
  evidence: number;
  /** Documents under and over `at`. */
  below: number;
  above: number;
}

export interface AlignBand {
  min: number;
  max: number;
  /** Where each edge came from: the user, the gap in the data, or the default. */
  from: { min: 'given' | 'data' | 'default'; max: 'given' | 'data' | 'default' };
  /** What the data proposes (absent: no clear gap). */
  proposed: { min?: Split | undefined; max?: Split | undefined };
  /** Documents with a compatible partner among their nearest, whose scores the histogram counts. */
  documents: number;
  histogram: ScoreBin[];
}

const round = (x: number, places = 4) => Math.round(x * 10 ** places) / 10 ** places;
const LOG_2PI = Math.log(2 * Math.PI);
const logNormal = (x: number, mu: number, v: number) => -0.5 * (LOG_2PI + Math.log(v) + (x - mu) ** 2 / v);

interface Mixture {
  w: [number, number];
  mu: [number, number];
  v: [number, number];
  logLik: number;
}

/** A two-Gaussian mixture by EM, started from the halves of the sorted scores; variances floored. */
function mixture(xs: readonly number[]): Mixture {
  const n = xs.length;
  const floor = 1e-4;
  const half = Math.floor(n / 2);
  const mean = (a: readonly number[]) => a.reduce((s, x) => s + x, 0) / a.length;
  const vari = (a: readonly number[], m: number) =>
    Math.max(floor, a.reduce((s, x) => s + (x - m) ** 2, 0) / a.length);
  const lo = xs.slice(0, half);
  const hi = xs.slice(half);
  const mu: [number, number] = [mean(lo), mean(hi)];
  const v: [number, number] = [vari(lo, mu[0]), vari(hi, mu[1])];
  const w: [number, number] = [0.5, 0.5];
  const r = new Float64Array(n);
  let logLik = Number.NEGATIVE_INFINITY;
  for (let it = 0; it < 200; it++) {
    let ll = 0;
    xs.forEach((x, i) => {
      const a = Math.log(w[0]) + logNormal(x, mu[0], v[0]);
      const b = Math.log(w[1]) + logNormal(x, mu[1], v[1]);
      const m = Math.max(a, b);
      const total = m + Math.log(Math.exp(a - m) + Math.exp(b - m));
      r[i] = Math.exp(a - total);
      ll += total;
    });
    const r0 = r.reduce((s, x) => s + x, 0);
    const r1 = n - r0;
    if (r0 < 1e-9 || r1 < 1e-9) break;
    w[0] = r0 / n;
    w[1] = r1 / n;
    mu[0] = xs.reduce((s, x, i) => s + (r[i] as number) * x, 0) / r0;
    mu[1] = xs.reduce((s, x, i) => s + (1 - (r[i] as number)) * x, 0) / r1;
    v[0] = Math.max(floor, xs.reduce((s, x, i) => s + (r[i] as number) * (x - mu[0]) ** 2, 0) / r0);
    v[1] = Math.max(floor, xs.reduce((s, x, i) => s + (1 - (r[i] as number)) * (x - mu[1]) ** 2, 0) / r1);
    const done = ll - logLik < 1e-9;
    logLik = ll;
    if (done) break;
  }
  return { w, mu, v, logLik };
}

/** The lowest point of the mixture's density between the two means. */
function valley(g: Mixture, lowMean: number, highMean: number): number {
  const density = (x: number) =>
    g.w[0] * Math.exp(logNormal(x, g.mu[0], g.v[0])) + g.w[1] * Math.exp(logNormal(x, g.mu[1], g.v[1]));
  let at = (lowMean + highMean) / 2;
  for (let k = 1; k < 400; k++) {
    const x = lowMean + ((highMean - lowMean) * k) / 400;
    if (density(x) < density(at)) at = x;
  }
  return at;
}

/** The gap between two modes of sorted scores, if the scores have two clear ones. */
export function split(sorted: readonly number[]): Split | undefined {
  const n = sorted.length;
  const least = Math.max(MIN_MODE, Math.ceil(MIN_SHARE * n));
  if (n < 2 * least) return undefined;
  const mean = sorted.reduce((s, x) => s + x, 0) / n;
  const v1 = Math.max(1e-4, sorted.reduce((s, x) => s + (x - mean) ** 2, 0) / n);
  const one = sorted.reduce((s, x) => s + logNormal(x, mean, v1), 0);
  const g = mixture(sorted);
  const evidence = 2 * (g.logLik - one) - 3 * Math.log(n); // BIC(one) - BIC(two): 2 vs 5 parameters
  const separation = (Math.SQRT2 * Math.abs(g.mu[1] - g.mu[0])) / Math.sqrt(g.v[0] + g.v[1]);
  if (!(evidence > EVIDENCE && separation > SEPARATED)) return undefined;
  // The edge sits in empty space: the middle of the widest gap between neighbouring scores near the lowest
  // point of the mixture's density between its two means (the one nearest that point among equals).
  const [lowMean, highMean] = g.mu[0] <= g.mu[1] ? g.mu : [g.mu[1], g.mu[0]];
  const low = valley(g, lowMean, highMean);
  const near = 0.25 * (highMean - lowMean);
  let at = low;
  let widest = -1;
  for (let i = 1; i < n; i++) {
    const [x, y] = [sorted[i - 1] as number, sorted[i] as number];
    const mid = (x + y) / 2;
    if (Math.abs(mid - low) > near) continue;
    if (
      y - x > widest + 1e-12 ||
      (Math.abs(y - x - widest) <= 1e-12 && Math.abs(mid - low) < Math.abs(at - low))
    )
      [widest, at] = [y - x, mid];
  }
  const below = sorted.filter((x) => x < at).length;
  if (below < least || n - below < least) return undefined;
  return {
    at: round(at),
    separation: round(separation, 2),
    evidence: round(evidence, 1),
    below,
    above: n - below,
  };
}

/** A tail needs this many documents to fit the no-partner mode on, and is cut where this share above is real. */
const TAIL_MIN_DOCS = 1000;
const TAIL_PRECISION = 0.9;
const TAIL_BIN = 0.005;

/** log of the Gumbel (maximum) density: a document's best chance similarity among many others. */
const logGumbel = (x: number, mu: number, beta: number) => {
  const z = (x - mu) / beta;
  return -Math.log(beta) - z - Math.exp(-z);
};

/**
 * A big corpus with few partners has no second mode to split at (partners are 1% of documents, not the 5%
 * a mode needs), but a tail above the no-partner mode. That mode is a maximum of many chance similarities, so
 * a Gumbel density is fitted to the bins near its peak (counts >= 20% of the peak's; least squares on log
 * counts, weighted by the counts), and the edge is the lowest score above which the fitted mode accounts for
 * at most 1 - TAIL_PRECISION of the documents (each above the edge pairs with its nearest).
 */
export function tailSplit(
  sorted: readonly number[],
  peakBelow = Number.POSITIVE_INFINITY,
): Split | undefined {
  const n = sorted.length;
  if (n < TAIL_MIN_DOCS) return undefined;
  const lo = sorted[0] as number;
  const bins = new Float64Array(Math.floor(((sorted[n - 1] as number) - lo) / TAIL_BIN) + 1);
  for (const x of sorted) bins[Math.floor((x - lo) / TAIL_BIN)]! += 1;
  const peak = bins.indexOf(Math.max(...bins));
  // The mode fitted must be the no-partner one: below the gap, when two modes were found.
  if (lo + (peak + 1) * TAIL_BIN > peakBelow) return undefined;
  let [from, to] = [peak, peak];
  while (from > 0 && (bins[from - 1] as number) >= 0.2 * (bins[peak] as number)) from--;
  while (to < bins.length - 1 && (bins[to + 1] as number) >= 0.2 * (bins[peak] as number)) to++;
  const centre = (b: number) => lo + (b + 0.5) * TAIL_BIN;
  let fit = { err: Number.POSITIVE_INFINITY, mu: 0, beta: 0, logA: 0 };
  for (let mu = centre(peak) - 0.05; mu <= centre(peak) + 0.05; mu += 0.001) {
    for (let beta = 0.005; beta <= 0.1; beta += 0.001) {
      let [w, sum] = [0, 0];
      for (let b = from; b <= to; b++) {
        const c = bins[b] as number;
        w += c;
        sum += c * (Math.log(c) - logGumbel(centre(b), mu, beta));
      }
      const logA = sum / w;
      let err = 0;
      for (let b = from; b <= to; b++) {
        const c = bins[b] as number;
        err += c * (Math.log(c) - logA - logGumbel(centre(b), mu, beta)) ** 2;
      }
      if (err < fit.err) fit = { err, mu, beta, logA };
    }
  }
  // Documents of the no-partner mode: its fitted count density over bins of width TAIL_BIN.
  const modeDocs = Math.exp(fit.logA) / TAIL_BIN;
  const chanceAbove = (x: number) => modeDocs * -Math.expm1(-Math.exp(-(x - fit.mu) / fit.beta));
  let at: number | undefined;
  let precision = 1;
  for (let i = n - 1; i > 0 && (sorted[i] as number) > fit.mu + fit.beta; i--) {
    const p = 1 - chanceAbove(sorted[i] as number) / (n - i);
    if (p < TAIL_PRECISION) break;
    if (n - i >= MIN_MODE) [at, precision] = [((sorted[i] as number) + (sorted[i - 1] as number)) / 2, p];
  }
  if (at === undefined) return undefined;
  const edge = at;
  const below = sorted.filter((x) => x < edge).length;
  const gumbelSd = (fit.beta * Math.PI) / Math.sqrt(6);
  return {
    at: round(at),
    kind: 'tail',
    precision: round(precision, 3),
    separation: round((edge - fit.mu) / gumbelSd, 2),
    evidence: 0,
    below,
    above: n - below,
  };
}

/** Equal-width bins of the scores (0.05 wide), from the lowest bin holding one to the highest. */
export function histogram(scores: readonly number[], width = 0.05): ScoreBin[] {
  if (scores.length === 0) return [];
  const index = (x: number) => Math.floor(round(x / width, 9));
  // Loops, not Math.min(...scores): a million documents' scores are too many arguments for one call.
  let [least, most] = [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
  for (const x of scores) [least, most] = [Math.min(least, x), Math.max(most, x)];
  const first = index(least);
  const last = index(most);
  const bins = Array.from({ length: last - first + 1 }, (_, k) => ({
    lo: round((first + k) * width),
    hi: round((first + k + 1) * width),
    n: 0,
  }));
  for (const x of scores) (bins[index(x) - first] as ScoreBin).n++;
  return bins;
}

/**
 * The band: the user's edges where given, else (with `auto`) the gaps in the nearest partners' scores (`nearest`,
 * one score a document), else the defaults. What the data proposes is reported either way.
 */
export function alignBand(
  nearest: readonly number[],
  given: { min?: number | undefined; max?: number | undefined },
  auto = false,
) {
  const sorted = [...nearest].sort((a, b) => a - b);
  const isCopies = (xs: readonly number[], s: Split | undefined) =>
    s && (xs[s.below] as number) >= COPIES_FROM;
  const first = split(sorted) ?? tailSplit(sorted);
  let proposedMin: Split | undefined;
  let copies: Split | undefined;
  let lower = sorted;
  if (isCopies(sorted, first)) {
    // The widest gap is below the near copies: the partners' gap, if any, is under it.
    copies = first;
    lower = sorted.slice(0, first?.below);
    proposedMin = split(lower);
  } else {
    proposedMin = first;
    const upper = first ? sorted.slice(first.below) : sorted;
    const top = split(upper);
    copies = isCopies(upper, top) ? top : undefined;
  }
  // Two modes in a corpus big enough to fit the no-partner one: the edge where the documents above it are
  // TAIL_PRECISION real by that fit. Among 10^5 scores the widest gap near the valley is any of thousands of
  // tiny ones (~0.07 either side of it); the fit says what the edge keeps (10^5 generated documents, hybrid:
  // recall 0.935 to 0.966, precision 0.989 to 0.979; docs/benchmarks/documents.md).
  if (proposedMin !== undefined && proposedMin.kind !== 'tail')
    proposedMin = tailSplit(lower, proposedMin.at) ?? proposedMin;
  // The proposal is taken only when asked for (`auto`): it is always computed and reported.
  const useMin = auto ? proposedMin : undefined;
  const useMax = auto ? copies : undefined;
  const band: AlignBand = {
    min: given.min ?? useMin?.at ?? DEFAULT_BAND.min,
    max: given.max ?? useMax?.at ?? DEFAULT_BAND.max,
    from: {
      min: given.min !== undefined ? 'given' : useMin ? 'data' : 'default',
      max: given.max !== undefined ? 'given' : useMax ? 'data' : 'default',
    },
    proposed: { min: proposedMin, max: copies },
    documents: nearest.length,
    histogram: histogram(nearest),
  };
  return band;
}

/** The histogram as terminal lines, the band's edges marked, then what was proposed and used. */
export function bandText(b: AlignBand): string {
  const widest = Math.max(1, ...b.histogram.map((x) => x.n));
  const lines = b.histogram.map((x) => {
    const bar = '#'.repeat(Math.round((40 * x.n) / widest)) || (x.n > 0 ? '.' : '');
    const edge = (e: number) => e >= x.lo && e < x.hi;
    const mark = edge(b.min) ? `  <- --min ${b.min}` : edge(b.max) ? `  <- --max ${b.max}` : '';
    return `${x.lo.toFixed(2)}-${x.hi.toFixed(2)} ${String(x.n).padStart(6)} ${bar}${mark}`;
  });
  const said = (e: 'min' | 'max') => {
    const p = b.proposed[e];
    const what = !p
      ? 'none'
      : p.kind === 'tail'
        ? `${p.at} (a tail of ${p.above} documents above a no-partner mode of ${p.below}; ` +
          `est. ${Math.round(100 * (p.precision ?? 0))}% of them with a real partner, ${p.separation} sd above the mode)`
        : `${p.at} (between ${p.below} and ${p.above} documents; separation ${p.separation}, BIC gain ${p.evidence})`;
    const take = p && b.from[e] === 'default' ? ` (left out by --no-auto-band; --${e} ${p.at} takes it)` : '';
    return `--${e} ${b[e]} (${b.from[e]}); the data proposes ${what}${take}`;
  };
  return [
    `nearest compatible partner of each of ${b.documents} documents (score: bin, documents):`,
    ...lines,
    said('min'),
    said('max'),
  ].join('\n');
}

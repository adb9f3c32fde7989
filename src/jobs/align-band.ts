/**
 * The band of `docs align` chosen from the data: each document's nearest compatible partner scores high when
 * it has a true partner and low when it has none, so those scores form two modes where the corpus has both
 * kinds, and the band's lower edge belongs in the gap between them. Two modes are accepted when a mixture of two
 * Gaussians (EM) explains the scores clearly better than one (BIC) and its components stand apart (Ashman's D);
 * the edge is the middle of the widest gap between scores near where the components cross. A further mode of
 * near copies above 0.85 sets the upper edge the same way. Without such modes the defaults stay. A big corpus
 * (1,000 documents on) whose lower half lies below any gap takes the tail rule's edge instead (tailSplit): the
 * score above which, by each document's second-nearest score, 80% of the documents are nearest a real partner.
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
  /**
   * Ashman's D of the two modes, and the BIC the second mode gains (both higher: clearer); a tail's: how many
   * chance spacings (tailSplit's beta) the edge is above the median, and 0.
   */
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
    // logNormal's terms that do not depend on x, once an iteration (the same sums in the same order).
    const lw0 = Math.log(w[0]);
    const lw1 = Math.log(w[1]);
    const c0 = LOG_2PI + Math.log(v[0]);
    const c1 = LOG_2PI + Math.log(v[1]);
    let ll = 0;
    for (let i = 0; i < n; i++) {
      const x = xs[i] as number;
      const a = lw0 + -0.5 * (c0 + (x - mu[0]) ** 2 / v[0]);
      const b = lw1 + -0.5 * (c1 + (x - mu[1]) ** 2 / v[1]);
      const m = Math.max(a, b);
      const total = m + Math.log(Math.exp(a - m) + Math.exp(b - m));
      r[i] = Math.exp(a - total);
      ll += total;
    }
    let r0 = 0;
    for (let i = 0; i < n; i++) r0 += r[i] as number;
    const r1 = n - r0;
    if (r0 < 1e-9 || r1 < 1e-9) break;
    w[0] = r0 / n;
    w[1] = r1 / n;
    let s0 = 0;
    let s1 = 0;
    for (let i = 0; i < n; i++) {
      s0 += (r[i] as number) * (xs[i] as number);
      s1 += (1 - (r[i] as number)) * (xs[i] as number);
    }
    mu[0] = s0 / r0;
    mu[1] = s1 / r1;
    s0 = 0;
    s1 = 0;
    for (let i = 0; i < n; i++) {
      s0 += (r[i] as number) * ((xs[i] as number) - mu[0]) ** 2;
      s1 += (1 - (r[i] as number)) * ((xs[i] as number) - mu[1]) ** 2;
    }
    v[0] = Math.max(floor, s0 / r0);
    v[1] = Math.max(floor, s1 / r1);
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

/** A tail needs this many documents to read the chance spacing in, and is cut where this share above is real. */
const TAIL_MIN_DOCS = 1000;
const TAIL_PRECISION = 0.8;
/** Where the edge may go (a grid: the scan's step), and the bins the second scores are counted in. */
const TAIL_STEP = 0.0025;
const TAIL_BIN = 0.001;

/**
 * A big corpus with few partners has no second mode to split at (partners are 1% of documents, not the 5%
 * a mode needs), but a tail above the no-partner mode. How many documents above a score x are there by
 * chance is read from each document's second-nearest score. A document's chance similarities above its own
 * level are the top of a tail (Gumbel's domain: the points of a Poisson process), so its best lies above
 * its second by an exponential spacing whose scale beta does not depend on that level: on 10^6 lab
 * documents without a partner the spacing's median was 0.0093-0.0110 at every decile of the second score,
 * its 90th centile 3.1 medians (an exponential's: 3.3). beta is read from the median spacing of the lower
 * half of the documents by second score, and the chance documents above x number sum over documents of
 * exp(-(x - second) / beta) (1 where the second is above x). The edge is the lowest x above which they are
 * at most 1 - TAIL_PRECISION of the documents there. The second score carries each document's own level of
 * chance similarity (documents on a crowded topic score high with everything), which one law fitted to the
 * mode's shape cannot: at 10^6 lab documents this edge kept R 0.899 at P 0.904 of the planted pairs, where a
 * Gumbel fit to the mode kept R 0.769 (docs/benchmarks/documents.md). A document with a partner adds its
 * chance best as a second, so partners make the estimate cautious, never bold.
 * `first` ascending, `second` each document's second-nearest score (NaN: none); `peakBelow`: the gap of two
 * modes, which the lower half must lie under.
 */
export function tailSplit(
  first: readonly number[],
  second: readonly number[],
  peakBelow = Number.POSITIVE_INFINITY,
): Split | undefined {
  const n = first.length;
  if (n < TAIL_MIN_DOCS) return undefined;
  const median = first[Math.floor(n / 2)] as number;
  if (median >= peakBelow) return undefined;
  const paired: Array<[number, number]> = [];
  for (let i = 0; i < n; i++)
    if (!Number.isNaN(second[i])) paired.push([first[i] as number, second[i] as number]);
  if (paired.length < TAIL_MIN_DOCS) return undefined;
  paired.sort((a, b) => a[1] - b[1]);
  const spacing = paired.slice(0, paired.length >> 1).map(([x, y]) => x - y);
  spacing.sort((a, b) => a - b);
  const beta = Math.max((spacing[spacing.length >> 1] as number) / Math.LN2, 1e-6);
  // Seconds further below x than this add no chance document (e^-30).
  const reach = 30 * beta;
  const lo = median - reach;
  const bins = new Float64Array(Math.ceil(((first[n - 1] as number) - lo) / TAIL_BIN) + 1);
  for (const [, y] of paired) if (y >= lo) bins[Math.floor((y - lo) / TAIL_BIN)]! += 1;
  let at: number | undefined;
  let precision = 1;
  for (let x = Math.floor((first[n - 1] as number) / TAIL_STEP) * TAIL_STEP; x > median; x -= TAIL_STEP) {
    const above = n - upperBound(first, x);
    let chance = 0;
    for (let b = Math.max(0, Math.floor((x - reach - lo) / TAIL_BIN)); b < bins.length; b++) {
      const gap = x - (lo + (b + 0.5) * TAIL_BIN);
      chance += (bins[b] as number) * (gap <= 0 ? 1 : Math.exp(-gap / beta));
    }
    const p = above > 0 ? 1 - chance / above : 1;
    if (above >= MIN_MODE && p < TAIL_PRECISION) break;
    if (above >= MIN_MODE) [at, precision] = [x, p];
  }
  if (at === undefined) return undefined;
  const edge = at;
  const below = upperBound(first, edge - 1e-12);
  return {
    at: round(edge),
    kind: 'tail',
    precision: round(precision, 3),
    // How far the edge is above the no-partner side's median, in chance spacings.
    separation: round((edge - median) / beta, 2),
    evidence: 0,
    below,
    above: n - below,
  };
}

/** The first index of ascending `xs` whose value is above `x`. */
function upperBound(xs: readonly number[], x: number): number {
  let [lo, hi] = [0, xs.length];
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if ((xs[m] as number) > x) hi = m;
    else lo = m + 1;
  }
  return lo;
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
 * one score a document), else the defaults. What the data proposes is reported either way. `second`: each
 * document's second-nearest score (NaN: none), which the tail rule reads (tailSplit); without it only modes
 * are proposed.
 */
export function alignBand(
  nearest: readonly number[],
  given: { min?: number | undefined; max?: number | undefined },
  auto = false,
  second?: readonly number[],
) {
  const order = nearest.map((_, i) => i).sort((a, b) => (nearest[a] as number) - (nearest[b] as number));
  const sorted = order.map((i) => nearest[i] as number);
  const seconds = second && order.map((i) => second[i] ?? Number.NaN);
  // The tail of the `count` lowest documents.
  const tail = (count: number, peakBelow?: number) =>
    seconds && tailSplit(sorted.slice(0, count), seconds.slice(0, count), peakBelow);
  const isCopies = (xs: readonly number[], s: Split | undefined) =>
    s && (xs[s.below] as number) >= COPIES_FROM;
  const first = split(sorted) ?? tail(sorted.length);
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
  // Two modes in a corpus big enough to read the chance spacing in: the edge where the documents above it are
  // TAIL_PRECISION real by that estimate. Among 10^5 scores the widest gap near the valley is any of thousands
  // of tiny ones (~0.07 either side of it); the estimate says what the edge keeps.
  if (proposedMin !== undefined && proposedMin.kind !== 'tail')
    proposedMin = tail(lower.length, proposedMin.at) ?? proposedMin;
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
        ? `${p.at} (a tail of ${p.above} documents above a no-partner mode of ${p.below}; est. ` +
          `${Math.round(100 * (p.precision ?? 0))}% of them nearest a real partner, by each one's second-nearest score; ` +
          `${p.separation} chance spacings above the median)`
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

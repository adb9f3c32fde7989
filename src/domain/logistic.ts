/**
 * Binary logistic regression, L2-regularized, on standardized features: full-batch Adam on the mean
 * log-loss (convex, so a few hundred steps converge for the sizes here: ~10^4 rows × 384 features for
 * the embedding method, ~10^3 × 4 for the combined score). Deterministic: zero start, fixed steps.
 */

export interface LogisticModel {
  mean: number[];
  std: number[];
  weights: number[];
  intercept: number;
}

export interface LogisticOptions {
  /** L2 penalty on the weights (not the intercept), per row. */
  l2?: number;
  iterations?: number;
  learningRate?: number;
}

/** Rows of `x` (n × d, row-major) with labels y (1 = positive). */
export function fitLogistic(
  x: Float32Array | Float64Array,
  y: Uint8Array,
  d: number,
  options: LogisticOptions = {},
): LogisticModel {
  const n = y.length;
  if (n === 0 || x.length !== n * d) throw new RangeError(`fitLogistic: ${x.length} values for ${n} × ${d}`);
  const l2 = options.l2 ?? 1e-3;
  const iterations = options.iterations ?? 400;
  const lr = options.learningRate ?? 0.05;
  const { mean, std } = standardization(x, n, d);
  const z = new Float64Array(n * d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) z[i * d + j] = (x[i * d + j]! - mean[j]!) / std[j]!;
  const w = new Float64Array(d + 1); // last = intercept
  const m = new Float64Array(d + 1);
  const v = new Float64Array(d + 1);
  const g = new Float64Array(d + 1);
  const b1 = 0.9;
  const b2 = 0.999;
  for (let t = 1; t <= iterations; t++) {
    g.fill(0);
    for (let i = 0; i < n; i++) {
      let s = w[d]!;
      const row = i * d;
      for (let j = 0; j < d; j++) s += w[j]! * z[row + j]!;
      const err = sigmoid(s) - y[i]!;
      for (let j = 0; j < d; j++) g[j]! += err * z[row + j]!;
      g[d]! += err;
    }
    for (let j = 0; j <= d; j++) {
      const gj = g[j]! / n + (j < d ? l2 * w[j]! : 0);
      m[j] = b1 * m[j]! + (1 - b1) * gj;
      v[j] = b2 * v[j]! + (1 - b2) * gj * gj;
      const mh = m[j]! / (1 - b1 ** t);
      const vh = v[j]! / (1 - b2 ** t);
      w[j]! -= (lr * mh) / (Math.sqrt(vh) + 1e-8);
    }
  }
  return { mean, std, weights: Array.from(w.subarray(0, d)), intercept: w[d]! };
}

function standardization(x: Float32Array | Float64Array, n: number, d: number) {
  const mean = new Array<number>(d).fill(0);
  const std = new Array<number>(d).fill(0);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) mean[j]! += x[i * d + j]! / n;
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) std[j]! += (x[i * d + j]! - mean[j]!) ** 2 / n;
  // A constant feature keeps std 1 (its weight then only moves the intercept).
  for (let j = 0; j < d; j++) std[j] = Math.sqrt(std[j]!) > 1e-12 ? Math.sqrt(std[j]!) : 1;
  return { mean, std };
}

export function sigmoid(s: number): number {
  return s >= 0 ? 1 / (1 + Math.exp(-s)) : Math.exp(s) / (1 + Math.exp(s));
}

/** The model's log-odds for one row of raw (unstandardized) features. */
export function logit(model: LogisticModel, row: ArrayLike<number>, offset = 0): number {
  let s = model.intercept;
  const d = model.weights.length;
  for (let j = 0; j < d; j++) s += (model.weights[j]! * (row[offset + j]! - model.mean[j]!)) / model.std[j]!;
  return s;
}

/** Accuracy (threshold 0.5) and mean log-loss on rows. */
export function evaluateLogistic(
  model: LogisticModel,
  x: Float32Array | Float64Array,
  y: Uint8Array,
): { accuracy: number; logLoss: number } {
  const d = model.weights.length;
  let right = 0;
  let loss = 0;
  for (let i = 0; i < y.length; i++) {
    const p = sigmoid(logit(model, x, i * d));
    if (p >= 0.5 === (y[i] === 1)) right++;
    loss -= Math.log(Math.max(y[i] === 1 ? p : 1 - p, 1e-12));
  }
  return { accuracy: right / y.length, logLoss: loss / y.length };
}

/**
 * The distribution of a σ column for domains.json: min, max, mean and the share below the change point
 * over every row; quantiles over an evenly strided sample of at most 10^6 rows (exact up to that size).
 */
import type { Column } from './column.js';
import type { SigmaQuantiles } from './manifest.js';

const MAX_SAMPLE = 1_000_000;

export interface SigmaStats {
  shareBelowZero: number;
  quantiles: SigmaQuantiles;
  /** σ at fractions 0, 0.001, …, 1 of the sorted sample. */
  table: number[];
}

/** σ's distribution over a column; NaN rows (deleted sentences a rebuild carried over) are left out. */
export function sigmaStats(column: Column): SigmaStats {
  let n = 0;
  let below = 0;
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const v of column.windows) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i]!;
      if (Number.isNaN(x)) continue;
      n++;
      if (x < 0) below++;
      sum += x;
      if (x < min) min = x;
      if (x > max) max = x;
    }
  }
  const stride = Math.max(1, Math.ceil(column.count / MAX_SAMPLE));
  const picked: number[] = [];
  for (let i = 0; i < column.count; i += stride) {
    const x = column.get(i);
    if (!Number.isNaN(x)) picked.push(x);
  }
  const sample = Float32Array.from(picked).sort();
  const q = (p: number) =>
    sample.length === 0 ? 0 : sample[Math.min(sample.length - 1, Math.floor(p * sample.length))]!;
  const table = Array.from({ length: TABLE_POINTS }, (_, i) => {
    if (sample.length === 0) return 0;
    if (i === TABLE_POINTS - 1) return max;
    return i === 0 ? min : q(i / (TABLE_POINTS - 1));
  });
  return {
    shareBelowZero: n === 0 ? 0 : below / n,
    table,
    quantiles: {
      min: n === 0 ? 0 : min,
      p01: q(0.01),
      p05: q(0.05),
      p10: q(0.1),
      p25: q(0.25),
      p50: q(0.5),
      p75: q(0.75),
      p90: q(0.9),
      p95: q(0.95),
      p99: q(0.99),
      max: n === 0 ? 0 : max,
      mean: n === 0 ? 0 : sum / n,
    },
  };
}

/** Points of the quantile table in domains.json (every 0.1%). */
export const TABLE_POINTS = 1001;

/** The σ below which `fraction` of the index lies (subsample by top fraction), from the quantile table. */
export function sigmaAtFraction(table: readonly number[], fraction: number): number {
  const x = Math.min(Math.max(fraction, 0), 1) * (table.length - 1);
  const i = Math.floor(x);
  if (i >= table.length - 1) return table[table.length - 1]!;
  return table[i]! + (x - i) * (table[i + 1]! - table[i]!);
}

/** Seeded synthetic vectors for tests (the generator lives in src/bench so the benchmark can use it too). */
export {
  ClusteredSpace,
  clusteredDataset,
  clusteredSpace,
  denseIds,
  gaussianVectors,
  normalizeRows,
  Rng,
} from '../../src/bench/index-vectors.js';

/** Exact top-k by brute force in JS (the reference the FAISS results are checked against). */
export function bruteForceTopK(
  corpus: Float32Array,
  ids: BigInt64Array,
  queries: Float32Array,
  dim: number,
  k: number,
  metric: 'ip' | 'l2',
): { distances: Float32Array; ids: BigInt64Array } {
  const n = corpus.length / dim;
  const nq = queries.length / dim;
  const outD = new Float32Array(nq * k);
  const outI = new BigInt64Array(nq * k);
  const scores = new Float64Array(n);
  const order = Array.from({ length: n }, (_, i) => i);
  for (let q = 0; q < nq; q++) {
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < dim; j++) {
        const a = queries[q * dim + j]!;
        const b = corpus[i * dim + j]!;
        s += metric === 'ip' ? a * b : (a - b) * (a - b);
      }
      scores[i] = s;
    }
    order.sort((a, b) => (metric === 'ip' ? scores[b]! - scores[a]! : scores[a]! - scores[b]!));
    for (let j = 0; j < k; j++) {
      outD[q * k + j] = scores[order[j]!]!;
      outI[q * k + j] = ids[order[j]!]!;
    }
  }
  return { distances: outD, ids: outI };
}

/** Share of the exact top-k ids (per query) found in the approximate top-k. */
export function recallAtK(
  exact: BigInt64Array,
  approx: BigInt64Array,
  nq: number,
  k: number,
  approxK = k,
): number {
  let hits = 0;
  for (let q = 0; q < nq; q++) {
    const want = new Set<bigint>();
    for (let j = 0; j < k; j++) want.add(exact[q * k + j]!);
    for (let j = 0; j < k; j++) if (want.has(approx[q * approxK + j]!)) hits++;
  }
  return hits / (nq * k);
}

/**
 * Seeded synthetic embeddings for index tests and benchmarks: the same seed gives the same vectors on every
 * machine and in every process (the benchmark hands them to Python FAISS through a file); and the exact
 * reference their search results are checked against.
 */

/** xoshiro128** seeded through splitmix32: small, fast, and good enough for test data. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spare: number | undefined;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
  }

  /** Uniform 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.b << 9) >>> 0;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Standard normal (Box-Muller, both values used). */
  normal(): number {
    if (this.spare !== undefined) {
      const v = this.spare;
      this.spare = undefined;
      return v;
    }
    let u = 0;
    while (u === 0) u = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    const theta = 2 * Math.PI * this.next();
    this.spare = r * Math.sin(theta);
    return r * Math.cos(theta);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** Scales each dim-sized row of `x` (in place) to unit length. */
export function normalizeRows(x: Float32Array, dim: number): Float32Array {
  for (let off = 0; off < x.length; off += dim) {
    let s = 0;
    for (let j = 0; j < dim; j++) {
      const v = x[off + j]!;
      s += v * v;
    }
    const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
    for (let j = 0; j < dim; j++) x[off + j] = x[off + j]! * inv;
  }
  return x;
}

export interface ClusteredOptions {
  seed: number;
  /** Number of topics; default round(sqrt(n) / 3), so a topic spans several IVF lists. */
  clusters?: number;
  /** Dimensions each topic varies along (its own random subspace); default 32. */
  latentDim?: number;
  /** Length of the within-topic offset relative to the unit topic centre; default 1.2. */
  spread?: number;
  /** Length of the isotropic noise relative to the unit topic centre; default 0.35. */
  noise?: number;
}

/**
 * The "world" that clustered vectors are drawn from: topic centres and the subspace each topic varies in.
 * Separate from the draws so that queries can come from the same world as the corpus.
 */
export class ClusteredSpace {
  readonly dim: number;
  readonly clusters: number;
  readonly latentDim: number;
  readonly spread: number;
  readonly noise: number;
  private readonly centres: Float32Array;
  private readonly bases: Float32Array;

  constructor(dim: number, options: Required<Omit<ClusteredOptions, 'seed'>> & { seed: number }) {
    this.dim = dim;
    this.clusters = options.clusters;
    this.latentDim = options.latentDim;
    this.spread = options.spread;
    this.noise = options.noise;
    const rng = new Rng(options.seed);
    this.centres = new Float32Array(this.clusters * dim);
    for (let i = 0; i < this.centres.length; i++) this.centres[i] = rng.normal();
    normalizeRows(this.centres, dim);
    // Random Gaussian directions are near-orthogonal in high dimension; scaled so a unit latent draw has
    // expected length 1 before `spread`.
    this.bases = new Float32Array(this.clusters * this.latentDim * dim);
    const scale = 1 / Math.sqrt(dim * this.latentDim);
    for (let i = 0; i < this.bases.length; i++) this.bases[i] = rng.normal() * scale;
  }

  /** n unit vectors; draws are reproducible from `seed` (use different seeds for corpus and queries). */
  sample(n: number, seed: number): { vectors: Float32Array; labels: Int32Array } {
    const { dim, latentDim } = this;
    const rng = new Rng(seed);
    const out = new Float32Array(n * dim);
    const labels = new Int32Array(n);
    const z = new Float64Array(latentDim);
    const noiseScale = this.noise / Math.sqrt(dim);
    for (let i = 0; i < n; i++) {
      const c = rng.int(this.clusters);
      labels[i] = c;
      for (let r = 0; r < latentDim; r++) z[r] = rng.normal() * this.spread;
      const row = i * dim;
      const centre = c * dim;
      for (let j = 0; j < dim; j++) out[row + j] = this.centres[centre + j]! + rng.normal() * noiseScale;
      for (let r = 0; r < latentDim; r++) {
        const zr = z[r]!;
        const basis = (c * latentDim + r) * dim;
        for (let j = 0; j < dim; j++) out[row + j] = out[row + j]! + zr * this.bases[basis + j]!;
      }
    }
    normalizeRows(out, dim);
    return { vectors: out, labels };
  }
}

export function clusteredSpace(n: number, dim: number, options: ClusteredOptions): ClusteredSpace {
  return new ClusteredSpace(dim, {
    seed: options.seed,
    clusters: options.clusters ?? Math.max(1, Math.round(Math.sqrt(n) / 3)),
    latentDim: options.latentDim ?? 32,
    spread: options.spread ?? 1.2,
    noise: options.noise ?? 0.35,
  });
}

/** Corpus and held-out queries from one clustered space (queries are new draws, not corpus copies). */
export function clusteredDataset(
  n: number,
  nq: number,
  dim: number,
  options: ClusteredOptions,
): { corpus: Float32Array; queries: Float32Array; space: ClusteredSpace } {
  const space = clusteredSpace(n, dim, options);
  const corpus = space.sample(n, options.seed + 1).vectors;
  const queries = space.sample(nq, options.seed + 2).vectors;
  return { corpus, queries, space };
}

/** Plain i.i.d. Gaussian vectors (optionally unit length): the hardest, structureless case. */
export function gaussianVectors(n: number, dim: number, seed: number, unit = false): Float32Array {
  const rng = new Rng(seed);
  const out = new Float32Array(n * dim);
  for (let i = 0; i < out.length; i++) out[i] = rng.normal();
  return unit ? normalizeRows(out, dim) : out;
}

/** Dense ids 0..n-1 (plus `offset`) as FAISS wants them. */
export function denseIds(n: number, offset = 0): BigInt64Array {
  const ids = new BigInt64Array(n);
  for (let i = 0; i < n; i++) ids[i] = BigInt(offset + i);
  return ids;
}

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

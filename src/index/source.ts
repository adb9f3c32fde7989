/**
 * Where a build reads its vectors: row i is the vector of id i. The indexer's spill files, an index's
 * vectors.f16 (VectorFile), embeddings made elsewhere, or a benchmark's generator all serve as one, so
 * the build phases (train.ts, fill.ts) read them the same way and never hold more than they ask for.
 */
export interface VectorSource {
  readonly count: number;
  readonly dim: number;
  /** Rows first .. first + count - 1, as count x dim float32. */
  read(first: number, count: number): Promise<Float32Array>;
  /** Rows of the given ids (ascending order reads fastest), in the order given. */
  readIds(ids: readonly number[]): Promise<Float32Array>;
}

/** Every `step`-th element of a sorted list, `m` of them: an evenly spread subsample of a sample. */
export function spread<T>(items: readonly T[], m: number): T[] {
  if (m >= items.length) return [...items];
  const out: T[] = [];
  const step = items.length / m;
  for (let i = 0; i < m; i++) out.push(items[Math.floor(i * step)] as T);
  return out;
}

/** The rows at `rows` (row-major, `dim` wide) copied into one array, in that order. */
export function gatherRows(vectors: Float32Array, rows: readonly number[], dim: number): Float32Array {
  const out = new Float32Array(rows.length * dim);
  rows.forEach((r, j) => {
    out.set(vectors.subarray(r * dim, (r + 1) * dim), j * dim);
  });
  return out;
}

/** The rows whose id is not in `skip` (the same arrays when none is). */
export function withoutIds(
  vectors: Float32Array,
  rowIds: BigInt64Array,
  skip: ReadonlySet<number> | undefined,
): [Float32Array, BigInt64Array] {
  if (skip === undefined || skip.size === 0) return [vectors, rowIds];
  const keep = [...rowIds.keys()].filter((i) => !skip.has(Number(rowIds[i])));
  if (keep.length === rowIds.length) return [vectors, rowIds];
  const kept = gatherRows(vectors, keep, vectors.length / rowIds.length);
  return [kept, BigInt64Array.from(keep, (row) => rowIds[row] as bigint)];
}

/**
 * `base`'s rows followed by `count - base.count` more that `rest` gives by id (an index's vectors.f16 and
 * the float32 copies of the sentences added since its build).
 */
export function appendedSource(
  base: VectorSource,
  count: number,
  rest: (ids: readonly number[]) => Float32Array,
): VectorSource {
  const dim = base.dim;
  const readIds = async (ids: readonly number[]): Promise<Float32Array> => {
    const out = new Float32Array(ids.length * dim);
    const built = [...ids.keys()].filter((i) => (ids[i] as number) < base.count);
    const added = [...ids.keys()].filter((i) => (ids[i] as number) >= base.count);
    const place = (rows: number[], values: Float32Array) => {
      for (const [j, i] of rows.entries()) out.set(values.subarray(j * dim, (j + 1) * dim), i * dim);
    };
    if (built.length > 0) place(built, await base.readIds(built.map((i) => ids[i] as number)));
    if (added.length > 0) place(added, rest(added.map((i) => ids[i] as number)));
    return out;
  };
  return {
    count,
    dim,
    readIds,
    read: async (first, n) => {
      if (first + n <= base.count) return base.read(first, n);
      return readIds(Array.from({ length: n }, (_, i) => first + i));
    },
  };
}

/** mulberry32: small, fast, good enough to pick sample ids reproducibly. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * m ids out of [0, n), sorted, each subset equally likely: a seeded uniform sample over the whole
 * collection (Algorithm L's skips would be faster; Algorithm R's one draw per id is fine up to 10^9).
 */
export function sampleIds(n: number, m: number, seed: number): number[] {
  if (m >= n) return Array.from({ length: n }, (_, i) => i);
  const rand = prng(seed);
  const res = new Float64Array(m);
  for (let i = 0; i < m; i++) res[i] = i;
  for (let i = m; i < n; i++) {
    const j = Math.floor(rand() * (i + 1));
    if (j < m) res[j] = i;
  }
  return Array.from(res.sort());
}

/**
 * The training sample: a seeded uniform sample of the spilled vectors (reservoir sampling over ids),
 * read back chunk by chunk, so training sees the whole corpus, not its first files, and a resumed
 * build trains on exactly the same vectors.
 */
import { readChunk } from './spill.js';

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

/** m ids out of [0, n), sorted, chosen uniformly (Algorithm R). */
export function sampleIds(n: number, m: number, seed: number): number[] {
  if (m >= n) return Array.from({ length: n }, (_, i) => i);
  const rand = prng(seed);
  const res = Array.from({ length: m }, (_, i) => i);
  for (let i = m; i < n; i++) {
    const j = Math.floor(rand() * (i + 1));
    if (j < m) res[j] = i;
  }
  return res.sort((a, b) => a - b);
}

export async function readSample(
  workDir: string,
  ids: readonly number[],
  perChunk: number,
  dim: number,
): Promise<Float32Array> {
  const out = new Float32Array(ids.length * dim);
  let i = 0;
  while (i < ids.length) {
    const chunk = Math.floor((ids[i] as number) / perChunk);
    const vectors = await readChunk(workDir, chunk, dim);
    for (; i < ids.length && Math.floor((ids[i] as number) / perChunk) === chunk; i++) {
      const row = (ids[i] as number) - chunk * perChunk;
      out.set(vectors.subarray(row * dim, (row + 1) * dim), i * dim);
    }
  }
  return out;
}

/** Merging per-shard top-k lists into one top-k. */
import type { Metric, SearchResult } from '../native/index.js';

/**
 * Each part holds n rows of k hits sorted best-first (FAISS order); the result keeps the k best of each row
 * across parts. IP: larger is better; L2: smaller. Ties go to the smaller id; empty slots (id -1) go last
 * and stay -1 with FAISS's sentinel distance.
 */
export function mergeTopK(
  parts: readonly SearchResult[],
  n: number,
  k: number,
  metric: Metric,
): SearchResult {
  const distances = new Float32Array(n * k);
  const ids = new BigInt64Array(n * k);
  const ip = metric === 'ip';
  const empty = ip ? -3.4028234663852886e38 : 3.4028234663852886e38;
  const heads = new Int32Array(parts.length);
  for (let q = 0; q < n; q++) {
    heads.fill(0);
    const row = q * k;
    for (let j = 0; j < k; j++) {
      let best = -1;
      let bestD = 0;
      let bestId = 0n;
      for (let p = 0; p < parts.length; p++) {
        const h = heads[p]!;
        if (h >= k) continue;
        const part = parts[p]!;
        const id = part.ids[row + h]!;
        if (id < 0n) continue;
        const d = part.distances[row + h]!;
        if (best < 0 || (ip ? d > bestD : d < bestD) || (d === bestD && id < bestId)) {
          best = p;
          bestD = d;
          bestId = id;
        }
      }
      if (best < 0) {
        distances.fill(empty, row + j, row + k);
        ids.fill(-1n, row + j, row + k);
        break;
      }
      heads[best] = heads[best]! + 1;
      distances[row + j] = bestD;
      ids[row + j] = bestId;
    }
  }
  return { distances, ids };
}

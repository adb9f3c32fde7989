/**
 * Neighbours of neighbours, once (NN-descent's step): each document's list is offered the lists of its best
 * few neighbours, scored exactly. In a crowd of documents alike (rewrites of one story, the lab's fillers cut
 * from one pool) the IVF search finds a near one and misses the nearest when no probed list holds it; the
 * near one's own list often does. The lists must be exact scores (re-scored), best first.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { insertSorted, type NeighbourOptions, type Neighbours, rowIndex, SLICE } from './align-search.js';

/** Neighbours whose lists are offered: the best two (16 candidates a document at k 8). */
export const HOP_FROM = 2;

export interface HopOptions {
  /** Neighbours whose lists are offered. */
  from?: number;
  /** Only these rows of `found` are offered lists (all when not given); their pairs still go both ways. */
  rows?: ArrayLike<number>;
  /** Only these documents are offered (near copies are not). */
  keep?: (j: number) => boolean;
  /** Rows done of all, every slice and at the end. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * Each row of `found` offered the lists of its `from` best neighbours as they stood before this pass (so the
 * answer does not depend on the rows' order), each candidate scored by `rescore`; a better one takes its
 * place, and its pair is offered to the other side's list too (equal scores keep the first offered). Returns the
 * entries added.
 */
export async function addNeighboursOfNeighbours(
  found: Neighbours,
  rescore: NonNullable<NeighbourOptions['rescore']>,
  { from = HOP_FROM, rows, keep = () => true, onProgress }: HopOptions = {},
): Promise<number> {
  const { docs, k } = found;
  const before = found.ids.slice();
  const rowOf = rowIndex(docs);
  const js = new Int32Array(from * k);
  const exact = new Float32Array(from * k);
  let added = 0;
  const total = rows?.length ?? docs.length;
  for (let x = 0; x < total; x++) {
    // At the top, so rows with nothing to offer still let the event loop run.
    if (x > 0 && x % SLICE === 0) {
      onProgress?.(x, total);
      await yieldToLoop();
    }
    const r = rows === undefined ? x : (rows[x] as number);
    const i = docs[r] as number;
    const own = before.subarray(r * k, (r + 1) * k);
    let m = 0;
    for (let h = 0; h < Math.min(from, k); h++) {
      const via = rowOf[own[h] as number] ?? -1;
      if ((own[h] as number) < 0 || via < 0) break;
      for (const j of before.subarray(via * k, (via + 1) * k)) {
        if (j < 0) break;
        if (j !== i && keep(j) && !own.includes(j) && !js.subarray(0, m).includes(j)) js[m++] = j;
      }
    }
    if (m === 0) continue;
    js.fill(-1, m);
    exact.fill(-2);
    rescore(i, js, exact);
    for (let c = 0; c < m; c++) {
      const j = js[c] as number;
      const score = exact[c] as number;
      if (insertSorted(found, r, j, score)) added++;
      const back = rowOf[j] ?? -1;
      if (back >= 0 && insertSorted(found, back, i, score)) added++;
    }
  }
  onProgress?.(total, total);
  return added;
}

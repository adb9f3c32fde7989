/**
 * Neighbours of neighbours, once (NN-descent's step): each document's list is offered the lists of its best
 * few neighbours, scored exactly. In a crowd of documents alike (rewrites of one story, the lab's fillers cut
 * from one pool) the IVF search finds a near one and misses the nearest when no probed list holds it; the
 * near one's own list often does. The lists must be exact scores (re-scored), best first.
 */
import { Turns } from '../turns.js';
import { type ScoreRows, type ScoreShare, ScoreThread, scoreRows } from './align-score.js';
import { insertSorted, type NeighbourOptions, type Neighbours, rowIndex, SLICE } from './align-search.js';

/** Neighbours whose lists are offered: the best two (16 candidates a document at k 8). */
export const HOP_FROM = 2;
/** Rows offered lists from which a worker thread scores half of them (starting one costs ~50 ms). */
export const THREAD_FROM = 8192;
/** Rows whose candidates are gathered, scored (half on the thread) and offered at a time: progress is told each. */
export const HOP_CHUNK = 8192;

export interface HopOptions {
  /** Neighbours whose lists are offered. */
  from?: number;
  /** Only these rows of `found` are offered lists (all when not given); their pairs still go both ways. */
  rows?: ArrayLike<number>;
  /** Only these documents are offered (near copies are not). */
  keep?: (j: number) => boolean;
  /** The rows the score reads, for a worker thread that scores half the rows (the same scores). */
  share?: (() => ScoreShare) | undefined;
  /** Rows from which that thread is used (THREAD_FROM). */
  threadFrom?: number;
  /** Rows done of all, every HOP_CHUNK rows and at the end. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * Each row of `found` offered the lists of its `from` best neighbours as they stood before this pass (so the
 * answer does not depend on the rows' order), each candidate scored by `rescore`; a better one takes its
 * place, and its pair is offered to the other side's list too (equal scores keep the first offered). Returns the
 * entries added. The candidates are scored a chunk at a time, half of them on a worker thread with `share`,
 * and offered in the rows' order: the lists come out as one thread makes them.
 */
export async function addNeighboursOfNeighbours(
  found: Neighbours,
  rescore: NonNullable<NeighbourOptions['rescore']>,
  { from = HOP_FROM, rows, keep = () => true, share, threadFrom = THREAD_FROM, onProgress }: HopOptions = {},
): Promise<number> {
  const { docs, k } = found;
  const before = found.ids.slice();
  const rowOf = rowIndex(docs);
  const width = from * k;
  const total = rows?.length ?? docs.length;
  const rowAt = (x: number) => (rows === undefined ? x : (rows[x] as number));
  /** Row r's candidates from its neighbours' lists as they stood (-1 padded); returns how many. */
  const gather = (r: number, js: Int32Array): number => {
    const i = docs[r] as number;
    const own = before.subarray(r * k, (r + 1) * k);
    let m = 0;
    for (let h = 0; h < Math.min(from, k); h++) {
      const via = rowOf[own[h] as number] ?? -1;
      if ((own[h] as number) < 0 || via < 0) break;
      for (let e = via * k; e < (via + 1) * k; e++) {
        const j = before[e] as number;
        if (j < 0) break;
        if (j === i || !keep(j) || own.includes(j)) continue;
        let seen = false;
        for (let c = 0; c < m && !seen; c++) seen = js[c] === j;
        if (!seen) js[m++] = j;
      }
    }
    js.fill(-1, m);
    return m;
  };
  const thread = share !== undefined && total >= threadFrom ? await ScoreThread.start(share()) : undefined;
  const turns = new Turns();
  let added = 0;
  try {
    for (let first = 0; first < total; first += HOP_CHUNK) {
      const last = Math.min(total, first + HOP_CHUNK);
      const batch: ScoreRows = {
        is: new Int32Array(last - first),
        js: new Int32Array((last - first) * width),
        width,
      };
      for (let x = first; x < last; x++) {
        batch.is[x - first] = docs[rowAt(x)] as number;
        gather(rowAt(x), batch.js.subarray((x - first) * width, (x - first + 1) * width));
      }
      // The first half on the thread, the second here (in slices, the event loop let go when owed a turn).
      const half = thread === undefined ? 0 : Math.floor((last - first) / 2);
      const there = thread?.score(part(batch, 0, half));
      const exact = new Float32Array(batch.js.length);
      for (let at = half; at < last - first; at += SLICE) {
        const end = Math.min(last - first, at + SLICE);
        exact.set(scoreRows(rescore, part(batch, at, end)), at * width);
        await turns.take();
      }
      if (there !== undefined) exact.set(await there, 0);
      for (let x = first; x < last; x++) {
        const r = rowAt(x);
        const i = docs[r] as number;
        for (let c = (x - first) * width; c < (x - first + 1) * width; c++) {
          const j = batch.js[c] as number;
          if (j < 0) break;
          const score = exact[c] as number;
          if (insertSorted(found, r, j, score)) added++;
          const back = rowOf[j] ?? -1;
          if (back >= 0 && insertSorted(found, back, i, score)) added++;
        }
      }
      onProgress?.(last, total);
      await turns.take();
    }
  } finally {
    await thread?.close();
  }
  if (total === 0) onProgress?.(0, 0);
  return added;
}

/** Rows [from, to) of `rows`: views, not copies. */
function part({ is, js, width }: ScoreRows, from: number, to: number): ScoreRows {
  return { is: is.subarray(from, to), js: js.subarray(from * width, to * width), width };
}

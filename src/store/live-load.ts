/**
 * The writes made since an index's build, put into a live index over its shards: the recorded sealed
 * segments opened and adopted, the sentences added after them into the growing exact segment. What a
 * serving process loads at start (service/writes.ts) and what `paramine tune` measures (the index as a
 * search sees it, not the shards alone).
 */
import { type LiveIndex, openSegment } from '../index/index.js';
import type { IndexUpdates } from './updates.js';

/** Rows added to the growing segment per call. */
const BATCH = 4096;

/**
 * Idempotent: segments the live index has are not opened again, sentences it holds not added again, so a
 * serving process calls it again to take in what another process wrote (`from`: added ids below it were
 * read before).
 */
export async function loadWrites(updates: IndexUpdates, live: LiveIndex, from = 0): Promise<void> {
  const dim = live.dim;
  for (const info of updates.segments) {
    if (info.first >= live.sealedTo) await live.adopt(await openSegment(updates.dir, info, dim));
  }
  let ids: number[] = [];
  let rows: Float32Array[] = [];
  const flush = async () => {
    const m = new Float32Array(ids.length * dim);
    rows.forEach((v, i) => {
      m.set(v, i * dim);
    });
    await live.add(m, ids);
    ids = [];
    rows = [];
  };
  for (const a of updates.addedRange(Math.max(from, updates.sealedTo))) {
    ids.push(a.id);
    rows.push(a.vector);
    if (ids.length === BATCH) await flush();
  }
  if (ids.length > 0) await flush();
}

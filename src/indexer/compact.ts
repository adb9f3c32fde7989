/**
 * `paramine index --compact DIR` (issue #30): the cheap compaction. The trained quantizers are kept
 * (Lucene's merge, Milvus's compaction): deleted ids are dropped from the shards that hold them (FAISS
 * remove_ids: one pass over the inverted lists, no re-encoding), the sentences added since the build are
 * encoded once into a clone of the trained template and merged into the last shard (or a new shard when
 * the last would outgrow the build's shard working set), and untouched shards stay as they are. The
 * search defaults and operating points stay too (`paramine tune` re-measures them); the sealed segments'
 * drift is carried into the manifest so the index still says when retraining (`--rebuild`) would pay.
 */
import { join } from 'node:path';
import { ParamineError } from '../errors.js';
import {
  compactedFit,
  fillPiece,
  joinFits,
  type Manifest,
  planForFactory,
  type SegmentFit,
  shardFileName,
  VECTORS_FILE,
  VectorFile,
  writeIndexFile,
} from '../index/index.js';
import { type FaissIndex, readIndex } from '../native/index.js';
import { IndexUpdates } from '../store/index.js';

export interface CompactedShards {
  shards: Array<{ file: string; count: number }>;
  /** The shard files written into `work` (the others are unchanged). */
  rewritten: Set<string>;
  /** Dropping deleted ids from the built shards. */
  removeMs: number;
  /** Encoding the added sentences and merging them in. */
  fillMs: number;
  /** The drift of every sentence folded in without retraining (earlier compactions' included). */
  fit: SegmentFit | undefined;
}

/**
 * The shards of `old` with `deleted` dropped and rows [old.ntotal, ntotal) of WORK/vectors.f16 added,
 * written into `work` (only the shards that change). `shardMemory`: the build's cap on one shard's
 * working set while filled, which decides between growing the last shard and starting a new one.
 */
export async function compactShards(
  dir: string,
  work: string,
  old: Manifest,
  rows: { ntotal: number; deleted: ReadonlySet<number>; shardMemory: number },
  log: (line: string) => void,
): Promise<CompactedShards> {
  const shards = old.shards.map((s) => ({ file: s.file, count: s.count }));
  const lastAt = shards.length - 1;
  let t0 = performance.now();
  // Ids removed by an earlier rebuild are tombstoned too: only newer deletes among the built ids remain.
  const builtDeleted: number[] = [];
  let addedDeleted = 0;
  for (const id of rows.deleted) {
    if (id < old.ntotal) builtDeleted.push(id);
    else addedDeleted++;
  }
  const toRemove = builtDeleted.length - (old.removed ?? 0);
  // The last shard stays open (the added sentences may join it); the others are written as they change.
  let last: FaissIndex | undefined;
  const rewritten = new Set<string>();
  const write = async (shard: FaissIndex, file: string) => {
    await writeIndexFile(shard, join(work, file));
    rewritten.add(file);
  };
  try {
    if (toRemove > 0) {
      last = await dropDeleted(dir, shards, builtDeleted, toRemove, write);
      log(`index --compact: ${toRemove} deleted sentences dropped from the shards`);
    }
    const removeMs = performance.now() - t0;
    t0 = performance.now();
    const addedIds = rows.ntotal - old.ntotal - addedDeleted;
    if (addedIds > 0) {
      const perVector = planForFactory(old.factory, { n: rows.ntotal, dim: old.dim, metric: old.metric }).cost
        .perVector.ram;
      const tail = shards[lastAt] as { file: string; count: number };
      // Inverted lists grow by doubling while filled (as the build's shardCount assumes).
      const grow = 2 * perVector * (tail.count + addedIds) <= rows.shardMemory;
      if (grow) last ??= await readIndex(join(dir, tail.file));
      // The trained template: a clone of a shard already open, else of the first one read for it.
      const added = await encodeAdded(
        work,
        old,
        rows,
        last ?? join(dir, (shards[0] as { file: string }).file),
      );
      if (grow) {
        tail.count += added.ntotal;
        await (last as FaissIndex).merge(added);
        await added.close();
      } else {
        const file = shardFileName(shards.length);
        shards.push({ file, count: added.ntotal });
        try {
          await write(added, file);
        } finally {
          await added.close();
        }
      }
    }
    if (last !== undefined) await write(last, (shards[lastAt] as { file: string }).file);
    const fillMs = performance.now() - t0;
    return { shards, rewritten, removeMs, fillMs, fit: foldedFit(dir, old, rows.ntotal) };
  } finally {
    await last?.close();
  }
}

/**
 * `ids` dropped from every shard that holds them (counts updated in `shards`), the changed ones written;
 * the last shard, when it changed, is returned open (the added sentences may join it).
 */
async function dropDeleted(
  dir: string,
  shards: Array<{ file: string; count: number }>,
  builtDeleted: readonly number[],
  toRemove: number,
  write: (shard: FaissIndex, file: string) => Promise<void>,
): Promise<FaissIndex | undefined> {
  const ids = BigInt64Array.from(builtDeleted, (id) => BigInt(id));
  let dropped = 0;
  let last: FaissIndex | undefined;
  try {
    for (const [i, s] of shards.entries()) {
      const shard = await readIndex(join(dir, s.file));
      const n = await shard.removeIds(ids);
      s.count -= n;
      dropped += n;
      if (i === shards.length - 1 && n > 0) last = shard;
      else {
        if (n > 0) await write(shard, s.file);
        await shard.close();
      }
    }
    if (dropped !== toRemove) {
      throw new ParamineError(
        'BAD_FILE',
        `${dir}: the shards held ${dropped} of the ${toRemove} deleted sentences they should; ` +
          `use paramine index --rebuild ${dir}`,
      );
    }
    return last;
  } catch (e) {
    await last?.close();
    throw e;
  }
}

/** The added rows (deleted ones left out) encoded into a clone of `trained` (an open shard, or a shard file). */
async function encodeAdded(
  work: string,
  old: Manifest,
  rows: { ntotal: number; deleted: ReadonlySet<number> },
  trained: FaissIndex | string,
): Promise<FaissIndex> {
  let template: FaissIndex;
  if (typeof trained === 'string') {
    const shard = await readIndex(trained);
    try {
      template = await shard.cloneEmpty();
    } finally {
      await shard.close();
    }
  } else template = await trained.cloneEmpty();
  const source = await VectorFile.openFile(join(work, VECTORS_FILE), rows.ntotal, old.dim);
  try {
    const count = rows.ntotal - old.ntotal;
    return await fillPiece({ template, source, first: old.ntotal, count, skip: rows.deleted });
  } finally {
    await source.close();
    await template.close();
  }
}

/** The sealed segments' fit (weighted by size) joined with what earlier compactions carried. */
function foldedFit(dir: string, old: Manifest, ntotal: number): SegmentFit | undefined {
  const updates = IndexUpdates.open(dir, old.ntotal);
  let fits: SegmentFit[];
  try {
    fits = updates.segments.filter((s) => s.first < ntotal).flatMap((s) => (s.fit ? [s.fit] : []));
  } finally {
    void updates.close();
  }
  const carried = compactedFit(old);
  if (carried !== undefined) fits.push(carried);
  return joinFits(fits);
}

/**
 * Refuses shards that cannot drop vectors in place (fast-scan, HNSW or refine layers), before any work:
 * the addon's own test (the one removeIds applies) on a memory map of the first shard, which reads no lists.
 */
export async function checkCompactable(old: Manifest, dir: string): Promise<void> {
  const first = old.shards[0];
  if (first === undefined) return;
  const shard = await readIndex(join(dir, first.file), { mmap: true });
  let removable: boolean;
  try {
    removable = shard.removable;
  } finally {
    await shard.close();
  }
  if (!removable) {
    throw new ParamineError(
      'BAD_INPUT',
      `${dir}: ${old.factory} cannot drop vectors in place (fast-scan, HNSW or refine layers); ` +
        `use paramine index --rebuild ${dir} (retrains)`,
      { field: 'index' },
    );
  }
}

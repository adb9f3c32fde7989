/**
 * The steps around a new generation, in the order generation.ts runs them: every vector gathered into
 * WORK/vectors.f16, the new files moved in with the manifest last, then the store, the updates, the group
 * tables and the later stages' columns brought up to the new id space. Each step after the move is
 * idempotent, so a run cut short by a crash is finished by running it again (finishCutShortRun).
 */

import { existsSync } from 'node:fs';
import { copyFile, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncDir, replaceFile } from '../durable.js';
import { ParamineError } from '../errors.js';
import {
  MANIFEST_FILE,
  type Manifest,
  type OperatingPoint,
  readManifest,
  toHalf,
  VECTORS_FILE,
} from '../index/index.js';
import { deletedIds, IndexUpdates, type NewSentence, SentenceStore, STORE_DIR } from '../store/index.js';
import { dedupKey } from '../text/index.js';
import { buildGroupTables, staleGroupTables } from './groups.js';

/** Where a rebuild writes its files before they are moved in. */
export const WORK = '.rebuild';
/** The store's record of how many deleted ids a rebuild has erased (checked against the manifest's `removed`). */
const REMOVED_STATE = 'rebuild.removed';

export interface RebuildSummary {
  /** The rebuilt index's id space: built and added sentences, deleted ones included. */
  ntotal: number;
  /** Of them, added since the build or the last rebuild. */
  folded: number;
  /** Deleted ones (in no shard now, their text erased). */
  deleted: number;
  factory: string;
  /** Training time (0 for a compaction: the trained quantizers are kept). */
  trainMs: number;
  /** Encoding vectors into the index (a compaction: only the added ones). */
  fillMs: number;
  /** Whether the quantizers were trained anew (`--rebuild`) or kept (`--compact`). */
  retrained: boolean;
  /** The move of an earlier rebuild cut short was finished instead. */
  resumed: boolean;
  /** The operating point tuning made the search defaults (IVF indexes, after retraining). */
  tuned?: OperatingPoint | undefined;
  /** What followed the index (the `after` steps' report: the domains carried over). */
  carried: string[];
  /** Group tables built again over every sentence (their keys). */
  regrouped: string[];
}

/**
 * Steps of later stages that follow a rebuild (the composition root passes them: the domains' columns):
 * `pending` says whether a rebuilt index still lacks them (a crash came between), `run` does them
 * (idempotent) once the store and updates are whole.
 */
export interface RebuildFollowers {
  pending(dir: string, manifest: Manifest): Promise<boolean>;
  run(dir: string, manifest: Manifest, deleted: ReadonlySet<number>): Promise<string[]>;
}

export const NO_FOLLOWERS: RebuildFollowers = { pending: async () => false, run: async () => [] };

/** What follows the move: store, updates, group tables, later stages (every step idempotent). */
export async function finishSteps(
  dir: string,
  manifest: Manifest,
  followers: RebuildFollowers,
): Promise<{ folded: number; deleted: number; regrouped: string[]; carried: string[] }> {
  const folded = await fold(dir, manifest.ntotal);
  const regrouped = await regroup(dir);
  const deleted = new Set([...deletedIds(dir)].filter((id) => id < manifest.ntotal));
  return { ...folded, regrouped, carried: await followers.run(dir, manifest, deleted) };
}

/** A run a crash cut short: its manifest, and whether its files are still to move in (undefined: none). */
export async function cutShortRun(
  dir: string,
  followers: RebuildFollowers,
): Promise<{ manifest: Manifest; move: boolean } | undefined> {
  const work = join(dir, WORK);
  if (existsSync(join(work, MANIFEST_FILE))) return { manifest: await readManifest(work), move: true };
  const manifest = await readManifest(dir);
  if (manifest.build.rebuild === undefined) return undefined;
  const pending = (await staleGroupTables(dir)).length > 0 || (await followers.pending(dir, manifest));
  return allLanded(dir, manifest) && !pending ? undefined : { manifest, move: false };
}

/** A rebuild cut short by a crash, finished (undefined: there is none); the caller holds the lock. */
export async function finishCutShortRun(
  dir: string,
  log: (line: string) => void,
  followers: RebuildFollowers,
): Promise<RebuildSummary | undefined> {
  const run = await cutShortRun(dir, followers);
  if (run === undefined) return undefined;
  const { manifest } = run;
  if (run.move) {
    log(`${commandOf(manifest)}: finishing the move of a run cut short`);
    await moveIn(dir, join(dir, WORK));
  } else {
    log(`${commandOf(manifest)}: finishing a run cut short`);
  }
  return {
    ...(await finishSteps(dir, manifest, followers)),
    ntotal: manifest.ntotal,
    factory: manifest.factory,
    trainMs: 0,
    fillMs: 0,
    retrained: commandOf(manifest) === 'index --rebuild',
    resumed: true,
  };
}

/** The command that wrote `manifest`: a rebuild retrains, a compaction keeps the quantizers. */
export function commandOf(manifest: Manifest): 'index --rebuild' | 'index --compact' {
  const retrained = (manifest.build.rebuild as { retrained?: boolean } | undefined)?.retrained;
  return retrained === false ? 'index --compact' : 'index --rebuild';
}

/** Every sentence's vector, built and added, into WORK/vectors.f16; the next id and the deleted ids. */
export async function gatherVectors(
  dir: string,
  work: string,
  old: Manifest,
  log: (line: string) => void,
): Promise<{ ntotal: number; deleted: Set<number> }> {
  if (old.vectors === undefined) {
    throw new ParamineError(
      'BAD_INPUT',
      `${dir} keeps no vectors (vectors.f16): a rebuild needs them; build it again with --vectors f16`,
      { field: 'index' },
    );
  }
  const updates = IndexUpdates.open(dir, storeCount(dir));
  try {
    const ntotal = updates.nextId;
    await rm(work, { recursive: true, force: true });
    await mkdir(work, { recursive: true });
    const kept = old.vectors.count;
    log(`gathering the vectors: ${kept} kept + ${ntotal - kept} added sentences`);
    const deleted = new Set(updates.tombstones);
    await writeVectors(join(dir, VECTORS_FILE), join(work, VECTORS_FILE), updates, {
      from: kept,
      to: ntotal,
      deleted,
      dim: old.dim,
    });
    return { ntotal, deleted };
  } finally {
    await updates.close();
  }
}

/** The group tables built again over every sentence, folded ones included (their keys). */
async function regroup(dir: string): Promise<string[]> {
  const specs = await staleGroupTables(dir);
  await buildGroupTables(dir, specs, { quiet: true });
  return specs.map((s) => s.key);
}

function storeCount(dir: string): number {
  const store = SentenceStore.open(join(dir, STORE_DIR), { readOnly: true });
  try {
    return store.count;
  } finally {
    void store.close();
  }
}

/** Whether a rebuilt index's last steps all landed: sentences in the store, deletes erased, the fold recorded. */
function allLanded(dir: string, manifest: Manifest): boolean {
  const store = SentenceStore.open(join(dir, STORE_DIR), { readOnly: true });
  try {
    if (store.count < manifest.ntotal) return false;
    if ((store.getState<number>(REMOVED_STATE) ?? 0) < (manifest.removed ?? 0)) return false;
    const updates = IndexUpdates.open(dir, store.count);
    try {
      return updates.foldRecorded >= manifest.ntotal;
    } finally {
      void updates.close();
    }
  } finally {
    void store.close();
  }
}

/** The kept vectors' file, then the added rows [from, to) as half floats, into `out`; deleted rows zeroed. */
async function writeVectors(
  kept: string,
  out: string,
  updates: IndexUpdates,
  rows: { from: number; to: number; deleted: ReadonlySet<number>; dim: number },
): Promise<void> {
  const { from, to } = rows;
  await replaceFile(out, async (tmp) => {
    // copy_file_range in the kernel (a reflink where the file system has them): GBs at 10^7 sentences.
    await copyFile(kept, tmp);
    const file = await open(tmp, 'a');
    try {
      for (let at = from; at < to; at += 4096) {
        const ids = Array.from({ length: Math.min(4096, to - at) }, (_, i) => at + i);
        const halves = toHalf(updates.vectorsOf(ids));
        await file.write(new Uint8Array(halves.buffer, halves.byteOffset, halves.byteLength));
      }
    } finally {
      await file.close();
    }
    await zeroRows(tmp, rows.deleted, rows.dim);
  });
}

/** Overwrites the given rows of a half-float vectors file with zeros (a deleted sentence's embedding). */
async function zeroRows(path: string, ids: ReadonlySet<number>, dim: number): Promise<void> {
  if (ids.size === 0) return;
  const zeros = new Uint8Array(dim * 2);
  const file = await open(path, 'r+');
  try {
    for (const id of ids) await file.write(zeros, 0, zeros.length, id * zeros.length);
  } finally {
    await file.close();
  }
}

/**
 * Moves the rebuilt files into `dir`: shards and vectors first, the manifest last (it names what is
 * there); shard files the new manifest does not name go (a compaction leaves unchanged shards in place).
 */
export async function moveIn(dir: string, work: string): Promise<void> {
  const named = new Set((await readManifest(work)).shards.map((s) => s.file));
  const files = (await readdir(work)).filter((f) => f !== MANIFEST_FILE && !f.includes('.tmp-'));
  for (const f of files) await rename(join(work, f), join(dir, f));
  for (const f of await readdir(dir))
    if (/^shard-\d+\.faiss$/.test(f) && !named.has(f)) await rm(join(dir, f));
  await rename(join(work, MANIFEST_FILE), join(dir, MANIFEST_FILE));
  await fsyncDir(dir);
  await rm(work, { recursive: true, force: true });
}

/**
 * The added sentences below `ntotal` are written into the store, the deleted ones' text erased from the
 * store and the updates (their tombstones stay), then the updates record that those ids live in the shards
 * and their sealed segments go. Each step is idempotent; until the store has them, the updates still serve
 * them (the service reads both).
 */
async function fold(dir: string, ntotal: number): Promise<{ folded: number; deleted: number }> {
  const store = SentenceStore.open(join(dir, STORE_DIR));
  const base = store.count;
  const updates = IndexUpdates.open(dir, base);
  try {
    let rows: NewSentence[] = [];
    const flush = async () => {
      await store.commit(rows);
      rows = [];
    };
    for (const a of updates.addedSentences(base)) {
      if (a.id >= ntotal) break;
      rows.push({
        id: a.id,
        text: a.text,
        key: dedupKey(a.text),
        ...(a.meta === undefined ? {} : { meta: a.meta }),
      });
      if (rows.length === 4096) await flush();
    }
    if (rows.length > 0) await flush();
    // Deletes applied for good; the store's record of it goes last (allLanded() checks it after a crash).
    const deleted = [...updates.tombstones].filter((id) => id < ntotal);
    await updates.erase(deleted, dedupKey);
    await store.erase(deleted, dedupKey, { [REMOVED_STATE]: deleted.length });
    await updates.fold(ntotal);
    return { folded: Math.max(0, ntotal - base), deleted: deleted.length };
  } finally {
    await updates.close();
    await store.close();
  }
}

/**
 * `paramine index --rebuild --index DIR` (issue #30): retrains an index that has taken writes, from the
 * vectors it keeps (vectors.f16 for the built sentences, the updates' own for the added ones), without
 * embedding anything again. The same factory is trained anew on a seeded sample of the live sentences,
 * filled with all of them under their ids, and written with a vectors.f16 that now covers the added
 * sentences too; the manifest's count becomes the next id, and the added sentences are written into the
 * sentence store. Ids do not change: group tables, jobs' pairs and tombstones keep their meaning.
 *
 * Deletes are applied for good (compaction): a deleted sentence is in no shard (the manifest counts it
 * under `removed`), its row of vectors.f16 is zeros, and its text, metadata and dedup key are erased from
 * the store and the updates; only its tombstone stays, so its id is never reused and jobs still skip it.
 * The sealed and growing segments are folded in: the updates record that ids below the new count live in
 * the shards (IndexUpdates.fold), and their segment files go.
 *
 * IVF indexes are then tuned as at the end of a build (operating points, search defaults).
 *
 * Crash-safe by steps: everything is written to DIR/.rebuild first (its manifest last); files are then
 * moved in with the manifest last, and a rebuild started again after a crash finishes the move when
 * .rebuild holds a whole manifest, or the store's and updates' steps when they did not all land. A
 * service serving DIR must be restarted to see the rebuild.
 */
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fsyncDir, replaceFile } from '../durable.js';
import { ParamineError } from '../errors.js';
import {
  type IndexPlan,
  MANIFEST_FILE,
  type Manifest,
  type OperatingPoint,
  planForFactory,
  readManifest,
  sampleIds,
  shardFileName,
  toHalf,
  VECTORS_FILE,
  VectorFile,
  writeIndexManifest,
  writeOneShard,
} from '../index/index.js';
import {
  deletedIds,
  groupTableIdentity,
  IndexUpdates,
  type NewSentence,
  SentenceStore,
  STORE_DIR,
} from '../store/index.js';
import { dedupKey } from '../text/index.js';
import { buildGroupTables, staleGroupTables } from './groups.js';
import { runTune } from './tune.js';

const WORK = '.rebuild';
/** The store's record of how many deleted ids a rebuild has erased (checked against the manifest's `removed`). */
const REMOVED_STATE = 'rebuild.removed';
const SEED = 1234;

export interface RebuildSummary {
  /** The rebuilt index's id space: built and added sentences, deleted ones included. */
  ntotal: number;
  /** Of them, added since the build or the last rebuild. */
  folded: number;
  /** Deleted ones (in no shard now, their text erased). */
  deleted: number;
  factory: string;
  trainMs: number;
  fillMs: number;
  /** The move of an earlier rebuild cut short was finished instead. */
  resumed: boolean;
  /** The operating point tuning made the search defaults (IVF indexes). */
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

const NO_FOLLOWERS: RebuildFollowers = { pending: async () => false, run: async () => [] };

export async function rebuildIndex(
  dir: string,
  log: (line: string) => void = () => {},
  followers: RebuildFollowers = NO_FOLLOWERS,
): Promise<RebuildSummary> {
  const cutShort = await finishCutShort(dir, log, followers);
  if (cutShort !== undefined) return cutShort;
  const old = await readManifest(dir);
  const work = join(dir, WORK);
  const { ntotal, deleted } = await gatherVectors(dir, work, old, log);
  const plan = planForFactory(old.factory, {
    n: ntotal,
    dim: old.dim,
    metric: old.metric,
    vectorsKept: true,
    ...(old.search.refine === undefined ? {} : { refine: old.search.refine }),
  });
  const source = await VectorFile.openFile(join(work, VECTORS_FILE), ntotal, old.dim);
  let times: { trainMs: number; fillMs: number };
  try {
    const live = Array.from({ length: ntotal }, (_, i) => i).filter((i) => !deleted.has(i));
    const sample = sampleIds(live.length, Math.min(plan.trainSize, live.length), SEED).map(
      (i) => live[i] as number,
    );
    log(`index --rebuild: ${plan.factory} trained on ${sample.length} of ${ntotal} sentences`);
    times = await writeOneShard(join(work, shardFileName(0)), plan, source, sample, {
      seed: SEED,
      skip: deleted,
    });
  } finally {
    await source.close();
  }
  await writeRebuiltManifest(work, old, plan, ntotal, { ...times, deleted: deleted.size });
  await moveIn(dir, work);
  const folded = await fold(dir, ntotal);
  const regrouped = await regroup(dir);
  const carried = await followers.run(dir, await readManifest(dir), deleted);
  const tuned = await tune(dir, plan.factory, log);
  return { ...folded, ...times, ntotal, factory: plan.factory, resumed: false, tuned, carried, regrouped };
}

/** A rebuild cut short by a crash, finished (undefined: there is none). */
async function finishCutShort(
  dir: string,
  log: (line: string) => void,
  followers: RebuildFollowers,
): Promise<RebuildSummary | undefined> {
  const work = join(dir, WORK);
  let manifest: Manifest;
  if (existsSync(join(work, MANIFEST_FILE))) {
    log('index --rebuild: finishing the move of a rebuild cut short');
    manifest = await readManifest(work);
    await moveIn(dir, work);
  } else {
    manifest = await readManifest(dir);
    if (manifest.build.rebuild === undefined) return undefined;
    const pending = (await staleGroupTables(dir)).length > 0 || (await followers.pending(dir, manifest));
    if (allLanded(dir, manifest) && !pending) return undefined;
    log('index --rebuild: finishing a rebuild cut short');
  }
  const folded = await fold(dir, manifest.ntotal);
  const regrouped = await regroup(dir);
  const deleted = new Set([...deletedIds(dir)].filter((id) => id < manifest.ntotal));
  return {
    ...folded,
    regrouped,
    carried: await followers.run(dir, manifest, deleted),
    ntotal: manifest.ntotal,
    factory: manifest.factory,
    trainMs: 0,
    fillMs: 0,
    resumed: true,
  };
}

/** Every sentence's vector, built and added, into WORK/vectors.f16; the next id and the deleted ids. */
async function gatherVectors(
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
    log(`index --rebuild: vectors of ${kept} kept + ${ntotal - kept} added sentences`);
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

/** The rebuilt index's manifest, in WORK (written last there: a whole rebuild waiting to be moved in). */
async function writeRebuiltManifest(
  work: string,
  old: Manifest,
  plan: IndexPlan,
  ntotal: number,
  stats: { trainMs: number; fillMs: number; deleted: number },
): Promise<void> {
  const refine = old.search.refine === undefined ? {} : { refine: old.search.refine };
  await writeIndexManifest(
    work,
    {
      factory: plan.factory,
      dim: old.dim,
      metric: old.metric,
      nlist: plan.nlist > 0 ? plan.nlist : null,
      shards: [{ file: shardFileName(0), count: ntotal - stats.deleted }],
      removed: stats.deleted,
    },
    {
      model: old.model,
      vectors: { file: VECTORS_FILE, dtype: 'float16', count: ntotal, dim: old.dim },
      search: plan.kind === 'flat' ? {} : { ...plan.search, ...refine },
      build: {
        ...old.build,
        // The group tables and the store describe the same sentences as before.
        groupsIdentity: groupTableIdentity(old),
        rebuild: { from: old.createdAt, sentences: ntotal, added: ntotal - old.ntotal, ...stats },
      },
    },
  );
}

/** The group tables built again over every sentence, folded ones included (their keys). */
async function regroup(dir: string): Promise<string[]> {
  const specs = await staleGroupTables(dir);
  await buildGroupTables(dir, specs, { quiet: true });
  return specs.map((s) => s.key);
}

/** Operating points and tuned search defaults, as at the end of a build (IVF only; the index is whole without). */
async function tune(
  dir: string,
  factory: string,
  log: (line: string) => void,
): Promise<OperatingPoint | undefined> {
  if (!/IVF\d/.test(factory)) return undefined;
  try {
    return (await runTune({ index: dir, quiet: true }, log)).chosen;
  } catch (e) {
    log(`tuning failed (${(e as Error).message}); the index is usable: run paramine tune --index ${dir}`);
    return undefined;
  }
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
    const sink = createWriteStream(tmp);
    await pipeline(createReadStream(kept), sink, { end: false });
    for (let at = from; at < to; at += 4096) {
      const ids = Array.from({ length: Math.min(4096, to - at) }, (_, i) => at + i);
      const halves = toHalf(updates.vectorsOf(ids));
      if (!sink.write(new Uint8Array(halves.buffer, halves.byteOffset, halves.byteLength))) {
        await new Promise<void>((r) => sink.once('drain', () => r()));
      }
    }
    await new Promise<void>((resolve, reject) => sink.end((e?: Error | null) => (e ? reject(e) : resolve())));
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

/** Moves the rebuilt files into `dir`: shards and vectors first, the manifest last (it names what is there). */
async function moveIn(dir: string, work: string): Promise<void> {
  const files = (await readdir(work)).filter((f) => f !== MANIFEST_FILE && !f.includes('.tmp-'));
  const keep = new Set(files);
  for (const f of files) await rename(join(work, f), join(dir, f));
  for (const f of await readdir(dir))
    if (/^shard-\d+\.faiss$/.test(f) && !keep.has(f)) await rm(join(dir, f));
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

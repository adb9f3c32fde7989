/**
 * `paramine index --rebuild --index DIR` (issue #30): retrains an index that has taken writes, from the
 * vectors it keeps (vectors.f16 for the built sentences, the updates' own for the added ones), without
 * embedding anything again. The same factory is trained anew on a seeded sample of every sentence (built
 * and added, deleted ones left out of the sample), filled with all of them under their ids, and written
 * with a vectors.f16 that now covers the added sentences too; the manifest's count becomes the next id,
 * and the added sentences are written into the sentence store. Ids do not change: group tables, jobs'
 * pairs and tombstones keep their meaning; deleted sentences stay tombstones (filtered everywhere, their
 * records kept). The sealed and growing segments are folded in: the updates record that ids below the new
 * count live in the shards (IndexUpdates.fold), and their segment files go.
 *
 * IVF indexes are then tuned as at the end of a build (operating points, search defaults).
 *
 * Crash-safe by steps: everything is written to DIR/.rebuild first (its manifest last); files are then
 * moved in with the manifest last, and a rebuild started again after a crash finishes the move when
 * .rebuild holds a whole manifest. A service serving DIR must be restarted to see the rebuild.
 */
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
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
  groupTableIdentity,
  IndexUpdates,
  type NewSentence,
  SentenceStore,
  STORE_DIR,
} from '../store/index.js';
import { dedupKey } from '../text/index.js';
import { runTune } from './tune.js';

const WORK = '.rebuild';
const SEED = 1234;

export interface RebuildSummary {
  /** Sentences in the rebuilt index (built and added; deleted ones stay as tombstones). */
  ntotal: number;
  /** Of them, added since the build or the last rebuild. */
  folded: number;
  deleted: number;
  factory: string;
  trainMs: number;
  fillMs: number;
  /** The move of an earlier rebuild cut short was finished instead. */
  resumed: boolean;
  /** The operating point tuning made the search defaults (IVF indexes). */
  tuned?: OperatingPoint | undefined;
}

export async function rebuildIndex(
  dir: string,
  log: (line: string) => void = () => {},
): Promise<RebuildSummary> {
  const cutShort = await finishCutShort(dir, log);
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
    times = await writeOneShard(join(work, shardFileName(0)), plan, source, sample, { seed: SEED });
  } finally {
    await source.close();
  }
  await writeRebuiltManifest(work, old, plan, ntotal, { ...times, deleted: deleted.size });
  await moveIn(dir, work);
  const folded = await fold(dir, ntotal);
  const tuned = await tune(dir, plan.factory, log);
  return { ...folded, ...times, ntotal, factory: plan.factory, resumed: false, tuned };
}

/** A rebuild cut short by a crash, finished (undefined: there is none). */
async function finishCutShort(dir: string, log: (line: string) => void): Promise<RebuildSummary | undefined> {
  const work = join(dir, WORK);
  let manifest: Manifest;
  if (existsSync(join(work, MANIFEST_FILE))) {
    log('index --rebuild: finishing the move of a rebuild cut short');
    manifest = await readManifest(work);
    await moveIn(dir, work);
  } else {
    manifest = await readManifest(dir);
    // Moved in, but cut short before its sentences reached the store.
    if (storeCount(dir) >= manifest.ntotal) return undefined;
    log('index --rebuild: finishing a rebuild cut short');
  }
  const folded = await fold(dir, manifest.ntotal);
  return {
    ...folded,
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
    await writeVectors(join(dir, VECTORS_FILE), join(work, VECTORS_FILE), updates, kept, ntotal);
    return { ntotal, deleted: new Set(updates.tombstones) };
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
      shards: [{ file: shardFileName(0), count: ntotal }],
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

/** The kept vectors' file, then the added rows [from, to) as half floats, into `out`. */
async function writeVectors(
  kept: string,
  out: string,
  updates: IndexUpdates,
  from: number,
  to: number,
): Promise<void> {
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
  });
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
 * The added sentences below `ntotal` are written into the store (deleted ones too: their tombstones stay),
 * then the updates record that those ids live in the shards and their sealed segments go. Each step is
 * idempotent; until the store has them, the updates still serve them (the service reads both).
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
    await updates.fold(ntotal);
    return { folded: Math.max(0, ntotal - base), deleted: updates.tombstones.size };
  } finally {
    await updates.close();
    await store.close();
  }
}

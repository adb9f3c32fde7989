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
  fillPiece,
  MANIFEST_FILE,
  type OperatingPoint,
  planForFactory,
  readManifest,
  sampleIds,
  shardFileName,
  toHalf,
  trainIndex,
  VECTORS_FILE,
  VectorFile,
  writeIndexFile,
  writeIndexManifest,
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
  const work = join(dir, WORK);
  if (existsSync(join(work, MANIFEST_FILE))) {
    log('index --rebuild: finishing the move of a rebuild cut short');
    const manifest = await readManifest(work);
    await moveIn(dir, work);
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
  const current = await readManifest(dir);
  if (storeCount(dir) < current.ntotal) {
    // A rebuild moved in but was cut short before its sentences reached the store.
    log('index --rebuild: finishing a rebuild cut short');
    const folded = await fold(dir, current.ntotal);
    return {
      ...folded,
      ntotal: current.ntotal,
      factory: current.factory,
      trainMs: 0,
      fillMs: 0,
      resumed: true,
    };
  }
  const old = await readManifest(dir);
  if (old.vectors === undefined) {
    throw new ParamineError(
      'BAD_INPUT',
      `${dir} keeps no vectors (vectors.f16): a rebuild needs them; build it again with --vectors f16`,
      { field: 'index' },
    );
  }
  const base = storeCount(dir);
  const updates = IndexUpdates.open(dir, base);
  let ntotal: number;
  let deleted: Set<number>;
  try {
    ntotal = updates.nextId;
    deleted = new Set(updates.tombstones);
    await rm(work, { recursive: true, force: true });
    await mkdir(work, { recursive: true });
    log(
      `index --rebuild: vectors of ${old.vectors.count} kept + ${ntotal - old.vectors.count} added sentences`,
    );
    await writeVectors(join(dir, VECTORS_FILE), join(work, VECTORS_FILE), updates, old.vectors.count, ntotal);
  } finally {
    await updates.close();
  }
  const { dim, metric } = old;
  const plan = planForFactory(old.factory, {
    n: ntotal,
    dim,
    metric,
    vectorsKept: true,
    ...(old.search.refine === undefined ? {} : { refine: old.search.refine }),
  });
  const source = await VectorFile.openFile(join(work, VECTORS_FILE), ntotal, dim);
  let trainMs = 0;
  let fillMs = 0;
  try {
    const live = Array.from({ length: ntotal }, (_, i) => i).filter((i) => !deleted.has(i));
    const sample = sampleIds(live.length, Math.min(plan.trainSize, live.length), 1234).map(
      (i) => live[i] as number,
    );
    log(`index --rebuild: ${plan.factory} trained on ${sample.length} of ${ntotal} sentences`);
    let t0 = performance.now();
    const template = await trainIndex({ plan, dim, metric, source, sampleIds: sample, seed: 1234 });
    trainMs = performance.now() - t0;
    try {
      t0 = performance.now();
      const shard = await fillPiece({ template, source, first: 0, count: ntotal });
      fillMs = performance.now() - t0;
      await writeIndexFile(shard, join(work, shardFileName(0)));
      await shard.close();
    } finally {
      await template.close();
    }
  } finally {
    await source.close();
  }
  const search =
    plan.kind === 'flat'
      ? {}
      : { ...plan.search, ...(old.search.refine ? { refine: old.search.refine } : {}) };
  await writeIndexManifest(
    work,
    {
      factory: plan.factory,
      dim,
      metric,
      nlist: plan.nlist > 0 ? plan.nlist : null,
      shards: [{ file: shardFileName(0), count: ntotal }],
    },
    {
      model: old.model,
      vectors: { file: VECTORS_FILE, dtype: 'float16', count: ntotal, dim },
      search,
      build: {
        ...old.build,
        // The group tables and the store describe the same sentences as before.
        groupsIdentity: groupTableIdentity(old),
        rebuild: {
          from: old.createdAt,
          sentences: ntotal,
          added: ntotal - old.ntotal,
          deleted: deleted.size,
          trainMs,
          fillMs,
        },
      },
    },
  );
  await moveIn(dir, work);
  const folded = await fold(dir, ntotal);
  return {
    ...folded,
    ntotal,
    factory: plan.factory,
    trainMs,
    fillMs,
    resumed: false,
    tuned: await tune(dir, plan.factory, log),
  };
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

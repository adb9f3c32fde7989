/**
 * `paramine index --rebuild DIR` and `paramine index --compact DIR` (issue #30): an index that has taken
 * writes, made whole again from the vectors it keeps (vectors.f16 for the built sentences, the updates'
 * own for the added ones), without embedding anything again. Ids do not change: group tables, jobs'
 * pairs and tombstones keep their meaning; the manifest's count becomes the next id, and the added
 * sentences are written into the sentence store.
 *
 * --rebuild retrains: the same factory trained anew on a seeded sample of the live sentences, filled with
 * all of them into one shard, then tuned as at the end of a build (operating points, search defaults).
 * --compact keeps the trained quantizers (compact.ts): deleted ids dropped from the shards, the added
 * sentences encoded once and merged in; minutes where the rebuild takes the build's training time.
 *
 * Both apply deletes for good: a deleted sentence is in no shard (the manifest counts it under
 * `removed`), its row of vectors.f16 is zeros, and its text, metadata and dedup key are erased from the
 * store and the updates; only its tombstone stays, so its id is never reused and jobs still skip it. The
 * sealed and growing segments are folded in (IndexUpdates.fold) and their segment files go.
 *
 * Each is a writer of a new generation: it writes its shards and manifest into DIR/.rebuild, and
 * generation.ts runs every step around it (the lock, a run cut short finished first, the vectors gathered,
 * the move in with the manifest last, the store and updates folded), so a crash at any point is finished by
 * running the command again. A `paramine serve` on DIR goes on answering and taking writes during a
 * compaction, and takes up the result once the structure lock is released (service/generation.ts); any
 * other process that has DIR open, or any at all for a rebuild, makes the run refused (store/index-lock.ts).
 */
import { join } from 'node:path';
import {
  DEFAULT_SEED,
  fileDigest,
  type IndexPlan,
  type Manifest,
  type OperatingPoint,
  planForFactory,
  sampleIds,
  shardFileName,
  VECTORS_FILE,
  VectorFile,
  writeIndexManifest,
  writeManifest,
  writeOneShard,
} from '../index/index.js';
import { groupTableIdentity } from '../store/index.js';
import { checkCompactable, compactShards } from './compact.js';
import {
  type GenerationInput,
  type GenerationWriter,
  type RebuildFollowers,
  type RebuildSummary,
  writeGeneration,
} from './generation.js';
import { runTune } from './tune.js';

export type { RebuildFollowers, RebuildSummary } from './generation.js';

export interface RebuildOptions {
  /** Train the quantizers anew (default) or keep them (a compaction). */
  retrain?: boolean;
  /** A compaction grows the last shard while its working set stays under this (the build's --shard-memory). */
  shardMemory?: number;
}

export async function rebuildIndex(
  dir: string,
  log: (line: string) => void = () => {},
  followers?: RebuildFollowers,
  options: RebuildOptions = {},
): Promise<RebuildSummary> {
  const writer =
    (options.retrain ?? true)
      ? retrainWriter
      : compactWriter(options.shardMemory ?? Number.POSITIVE_INFINITY);
  return writeGeneration(dir, writer, log, followers);
}

/** `--rebuild`: the factory trained anew and filled with every live sentence, then tuned. */
const retrainWriter: GenerationWriter = {
  command: 'index --rebuild',
  async write({ work, old, ntotal, deleted, log }: GenerationInput) {
    const plan = planForFactory(old.factory, {
      n: ntotal,
      dim: old.dim,
      metric: old.metric,
      vectorsKept: true,
      ...(old.search.refine === undefined ? {} : { refine: old.search.refine }),
    });
    const times = await retrainShard(work, plan, ntotal, deleted, log);
    await writeRebuiltManifest(work, old, plan, ntotal, { ...times, deleted: deleted.size });
    return { factory: plan.factory, ...times };
  },
  after: tune,
};

/** `--compact`: the trained quantizers kept, deleted ids dropped and added sentences merged in. */
function compactWriter(shardMemory: number): GenerationWriter {
  return {
    command: 'index --compact',
    check: checkCompactable,
    async write({ dir, work, old, ntotal, deleted, log }: GenerationInput) {
      const c = await compactShards(dir, work, old, { ntotal, deleted, shardMemory }, log);
      await writeCompactedManifest(work, old, { ...c, ntotal, deleted: deleted.size });
      return { factory: old.factory, trainMs: 0, fillMs: c.fillMs };
    },
  };
}

/** The factory trained anew on a seeded sample of the live sentences and filled with all of them. */
async function retrainShard(
  work: string,
  plan: IndexPlan,
  ntotal: number,
  deleted: ReadonlySet<number>,
  log: (line: string) => void,
): Promise<{ trainMs: number; fillMs: number }> {
  const source = await VectorFile.openFile(join(work, VECTORS_FILE), ntotal, plan.dim);
  try {
    const live = Array.from({ length: ntotal }, (_, i) => i).filter((i) => !deleted.has(i));
    const sample = sampleIds(live.length, Math.min(plan.trainSize, live.length), DEFAULT_SEED).map(
      (i) => live[i] as number,
    );
    log(`index --rebuild: ${plan.factory} trained on ${sample.length} of ${ntotal} sentences`);
    return await writeOneShard(join(work, shardFileName(0)), plan, source, sample, {
      seed: DEFAULT_SEED,
      skip: deleted,
    });
  } finally {
    await source.close();
  }
}

/** The record every rebuilt manifest carries under build.rebuild. */
function rebuildRecord(
  old: Manifest,
  ntotal: number,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  return {
    ...old.build,
    // The group tables and the store describe the same sentences as before.
    groupsIdentity: groupTableIdentity(old),
    rebuild: { from: old.createdAt, sentences: ntotal, added: ntotal - old.ntotal, ...extra },
  };
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
      build: rebuildRecord(old, ntotal, { retrained: true, ...stats }),
    },
  );
}

/**
 * A compacted index's manifest, in WORK: the old one with the new shard counts (checksums of the shards
 * it rewrote), vectors and counts; search defaults and operating points kept with the quantizers.
 */
async function writeCompactedManifest(
  work: string,
  old: Manifest,
  c: Awaited<ReturnType<typeof compactShards>> & { ntotal: number; deleted: number },
): Promise<void> {
  const shards = await Promise.all(
    c.shards.map(async (s, i) =>
      c.rewritten.has(s.file)
        ? { ...s, ...(await fileDigest(join(work, s.file))) }
        : (old.shards[i] as typeof s),
    ),
  );
  const stats = { retrained: false, trainMs: 0, fillMs: c.fillMs, removeMs: c.removeMs, deleted: c.deleted };
  const manifest: Manifest = {
    ...old,
    ntotal: c.ntotal,
    ...(c.deleted > 0 ? { removed: c.deleted } : {}),
    shards,
    vectors: {
      file: VECTORS_FILE,
      dtype: 'float16',
      count: c.ntotal,
      dim: old.dim,
      ...(await fileDigest(join(work, VECTORS_FILE))),
    },
    build: rebuildRecord(old, c.ntotal, { ...stats, ...(c.fit === undefined ? {} : { fit: c.fit }) }),
    createdAt: new Date().toISOString(),
  };
  await writeManifest(work, manifest);
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

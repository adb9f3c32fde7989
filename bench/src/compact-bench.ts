/**
 * Compaction at scale (issue #30, BENCHMARKS.md "Writes"): an index over `--n` seeded clustered vectors
 * (the scale benchmark's space, no encoder: the planner's factory, vectors.f16 kept, a sentence store of
 * short texts), then a day's `--day` share of new vectors added through the updates and `--deletes` of the
 * built ones deleted. In one invocation, on two copies of that state: `index --compact` (trained
 * quantizers kept) and `index --rebuild` (retrained and tuned: a fresh build of the whole from the kept
 * vectors), each against the build's own time, and recall@10 of both at their search defaults against the
 * exact neighbours of held-out queries over the live vectors; the rebuild's also at the compacted index's
 * operating point (issue #30: appending 50% and compacting is within 0.02 of a fresh build there).
 *
 *   npm run lab -- compact [--n 1000000] [--day 0.01] [--deletes 0.001] [--nq 500] [--factory auto]
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineBenchmark, type Log } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import {
  chooseFactory,
  exactTopK,
  planForFactory,
  readManifest,
  ShardedIndex,
  VectorFile,
} from '../../dist/index/index.js';
import { rebuildIndex } from '../../dist/indexer/rebuild.js';
import { IndexUpdates, SentenceStore, STORE_DIR } from '../../dist/store/index.js';
import { clusteredSpace, recallAtK, writeVectorIndex } from '../../dist/testing/index.js';

const schema = z.object({
  n: z.coerce.number().int().min(10_000),
  day: z.coerce.number().gt(0).lt(1),
  deletes: z.coerce.number().min(0).lt(1),
  nq: z.coerce.number().int().min(10).max(10_000),
  dim: z.coerce.number().int().min(8).max(4096),
  seed: z.coerce.number().int(),
  factory: z.string().min(1),
});
type Options = z.output<typeof schema>;
const K = 10;
const BATCH = 65_536;

async function run(o: Options, log: Log): Promise<Result> {
  const loadBefore = loadavg();
  const dayN = Math.max(1, Math.round(o.n * o.day));
  const space = clusteredSpace(o.n + dayN, o.dim, { seed: o.seed });
  const dir = mkdtempSync(join(tmpdir(), 'paramine-compact-bench-'));
  const index = join(dir, 'index');
  try {
    log(`${o.n} + ${dayN} clustered ${o.dim}-d vectors`);
    const built = space.sample(o.n, o.seed + 1).vectors;
    const shape = { n: o.n, dim: o.dim, metric: 'ip' as const, vectorsKept: true };
    const plan = o.factory === 'auto' ? chooseFactory(shape) : planForFactory(o.factory, shape);
    log(`building ${plan.factory} over ${o.n}`);
    const b0 = performance.now();
    await writeVectorIndex(index, built, plan);
    const buildSeconds = (performance.now() - b0) / 1000;
    await writeStore(index, o.n);
    const deleted = await writeDay(index, o, space.sample(dayN, o.seed + 2).vectors, dayN);
    const queries = space.sample(o.nq, o.seed + 3).vectors;
    cpSync(index, join(dir, 'copy'), { recursive: true });
    const measure = async (what: 'compact' | 'rebuild', at: string): Promise<Refold> => {
      log(`index --${what}`);
      const t0 = performance.now();
      await rebuildIndex(at, () => {}, undefined, { retrain: what === 'rebuild' });
      const seconds = (performance.now() - t0) / 1000;
      const m = await readManifest(at);
      const { nprobe, kFactor } = m.search;
      const parts = m.build.rebuild as { trainMs: number; fillMs: number; removeMs?: number };
      const steps = { trainMs: parts.trainMs, fillMs: parts.fillMs, removeMs: parts.removeMs ?? 0 };
      const found = await recall(at, queries, deleted);
      return { seconds, ratio: seconds / buildSeconds, recall: found, nprobe, kFactor, steps };
    };
    const compact = await measure('compact', join(dir, 'copy'));
    const rebuild = await measure('rebuild', index);
    const point = { nprobe: compact.nprobe, kFactor: compact.kFactor };
    rebuild.atCompactPoint = await recall(index, queries, deleted, point);
    return {
      benchmark: 'compact',
      machine: machineInfo(loadBefore),
      options: o,
      factory: plan.factory,
      built: o.n,
      added: dayN,
      deleted: deleted.size,
      buildSeconds,
      compact,
      rebuild,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The sentence store a build writes (short texts: the compaction's fold appends to it). */
async function writeStore(index: string, n: number): Promise<void> {
  const store = SentenceStore.open(join(index, STORE_DIR));
  try {
    for (let at = 0; at < n; at += BATCH) {
      const rows = Array.from({ length: Math.min(BATCH, n - at) }, (_, i) => {
        const text = `sentence ${at + i}`;
        return { id: at + i, text, key: text };
      });
      await store.commit(rows);
    }
  } finally {
    await store.close();
  }
}

/** The day's vectors added through the updates (as `paramine add` does), then the deletes; their ids. */
async function writeDay(
  index: string,
  o: Options,
  vectors: Float32Array,
  dayN: number,
): Promise<Set<number>> {
  const updates = IndexUpdates.open(index, o.n);
  try {
    for (let at = 0; at < dayN; at += 4096) {
      const rows = Array.from({ length: Math.min(4096, dayN - at) }, (_, i) => {
        const text = `added ${at + i}`;
        return { text, key: text, vector: vectors.slice((at + i) * o.dim, (at + i + 1) * o.dim) };
      });
      await updates.add(rows);
    }
    const count = Math.round(o.n * o.deletes);
    const ids = Array.from({ length: count }, (_, i) => Math.floor((i * o.n) / Math.max(1, count)));
    await updates.delete(ids);
    return new Set(ids);
  } finally {
    await updates.close();
  }
}

/** recall@10 at the index's search defaults against the exact top 10 over its live vectors. */
async function recall(
  index: string,
  queries: Float32Array,
  deleted: ReadonlySet<number>,
  point?: { nprobe: number; kFactor: number },
): Promise<number> {
  const source = (await VectorFile.open(index)) as VectorFile;
  const sharded = await ShardedIndex.open(index);
  try {
    const exact = await exactTopK(source, queries, K, 'ip', { skipIds: deleted });
    const found = await sharded.search(queries, K, point);
    return recallAtK(exact, found.ids, queries.length / sharded.dim, K);
  } finally {
    await sharded.close();
    await source.close();
  }
}

interface Refold {
  seconds: number;
  /** Of the build's seconds. */
  ratio: number;
  recall: number;
  /** The search defaults the recall was measured at (a compaction keeps the build's; a rebuild tunes). */
  nprobe: number;
  kFactor: number;
  /** Training, encoding (compaction: the added vectors only; rebuild: all) and dropping deleted ids. */
  steps: { trainMs: number; fillMs: number; removeMs: number };
  /** The rebuild's recall@10 at the compacted index's nprobe and kFactor. */
  atCompactPoint?: number;
}

interface Result {
  benchmark: string;
  machine: ReturnType<typeof machineInfo>;
  options: Options;
  factory: string;
  built: number;
  added: number;
  deleted: number;
  buildSeconds: number;
  compact: Refold;
  rebuild: Refold;
}

function markdown(r: Result): string {
  const f = (x: number) => x.toFixed(1);
  const row = (what: string, x: Refold) =>
    `| ${what} | ${f(x.seconds)} s | ${(100 * x.ratio).toFixed(1)}% | ${f(x.steps.trainMs / 1000)} / ${f(x.steps.fillMs / 1000)} / ${f(x.steps.removeMs / 1000)} s | ${x.recall.toFixed(3)} at nprobe ${x.nprobe}, kFactor ${x.kFactor} |`;
  return [
    `| ${r.factory}: ${r.built} built + ${r.added} added, ${r.deleted} deleted | wall | of the build's ${f(r.buildSeconds)} s | train / encode / drop deleted | recall@10 at the search defaults |`,
    '|---|---:|---:|---:|---:|',
    row('`index --compact` (trained quantizers kept)', r.compact),
    row('`index --rebuild` (retrained, tuned)', r.rebuild),
    '',
    `The rebuild (a fresh build of the whole) at the compacted index's operating point: recall@10 ${r.rebuild.atCompactPoint?.toFixed(3)} (compacted ${r.compact.recall.toFixed(3)}).`,
    '',
  ].join('\n');
}

export const compactBench = defineBenchmark({
  name: 'compact',
  description: 'index --compact against index --rebuild and the build, on clustered vectors at scale',
  options: (cmd) =>
    cmd
      .option('--n <n>', 'built vectors', '1000000')
      .option('--day <share>', "the day's added vectors as a share of n", '0.01')
      .option('--deletes <share>', 'built vectors deleted, as a share of n', '0.001')
      .option('--nq <n>', 'held-out queries for recall', '500')
      .option('--dim <d>', 'dimension', '384')
      .option('--seed <n>', 'seed', '7')
      .option('--factory <str>', "FAISS factory (auto: the planner's choice)", 'auto'),
  schema,
  run: async (o, log) => {
    const r = await run(o, log);
    return { result: r, markdown: markdown(r) };
  },
});

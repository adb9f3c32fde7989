/**
 * `paramine tune --index DIR`: measures an index's operating points against exact ground truth and makes
 * the cheapest one reaching --target-recall its search defaults (src/index/tune.ts). Also the last step
 * of `paramine index` (tuneBuilt), unless --no-tune.
 */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { cli } from '../config.js';
import {
  appendedSource,
  DEFAULT_TARGET_RECALL,
  DEFAULT_TUNE_QUERIES,
  LiveIndex,
  type OperatingPoint,
  TombstoneSet,
  type TuneResult,
  type TuneView,
  tuneIndexDir,
} from '../index/index.js';
import { setNumThreads } from '../native/index.js';
import { createProgress, formatDuration } from '../progress.js';
import { deletedIds, IndexUpdates, loadWrites, UPDATES_DIR } from '../store/index.js';
import { parseInput } from '../validate.js';

/** The options of `paramine tune`, declared once with their flags (src/config.ts). */
export const tuneOptionsSchema = z.object({
  index: z.string().min(1).register(cli, {
    flag: '--index <dir>',
    description: 'index directory (its vectors.f16 gives queries and exact neighbours)',
  }),
  queries: z.coerce.number().int().min(10).max(100_000).default(DEFAULT_TUNE_QUERIES).register(cli, {
    flag: '--queries <n>',
    description: 'held-out queries drawn from the collection',
  }),
  targetRecall: z.coerce.number().gt(0).max(1).default(DEFAULT_TARGET_RECALL).register(cli, {
    flag: '--target-recall <r>',
    description: 'search defaults: the cheapest point reaching this recall@k',
  }),
  k: z.coerce.number().int().min(1).max(100).default(10).register(cli, {
    flag: '--k <n>',
    description: 'recall is measured at k',
  }),
  latencyQueries: z.coerce.number().int().min(10).max(100_000).default(300).register(cli, {
    flag: '--latency-queries <n>',
    description: 'queries timed one at a time for p50/p99',
  }),
  seed: z.coerce
    .number()
    .int()
    .default(20)
    .register(cli, { flag: '--seed <n>', description: 'seed of the query sample' }),
  threads: z.coerce.number().int().min(1).max(1024).optional().register(cli, {
    flag: '--threads <n>',
    description: 'FAISS threads while searching',
  }),
  full: z.boolean().default(false).register(cli, {
    flag: '--full',
    description: 'sweep every setting to saturation (default: stop each series past the target)',
  }),
  quiet: z.boolean().default(false).register(cli, { flag: '--quiet', description: 'no progress output' }),
});
export type TuneCommandOptions = z.input<typeof tuneOptionsSchema>;

/**
 * The index as a search sees it when sentences were added since its build (POST /v1/sentences, `paramine
 * add`): shards, sealed segments and the growing one, tombstones filtered; queries and exact neighbours
 * drawn from every live sentence, added ones included. Undefined when nothing was ever written.
 */
function liveView(dir: string, log: (line: string) => void): TuneView {
  return async (index, source) => {
    if (!existsSync(join(dir, UPDATES_DIR, 'data.mdb'))) return undefined;
    const tombstones = new TombstoneSet();
    const updates = IndexUpdates.open(dir, index.ntotal, tombstones);
    const live = new LiveIndex(index, tombstones);
    try {
      await loadWrites(updates, live);
    } catch (e) {
      await live.close();
      await updates.close();
      throw e;
    }
    const segments = updates.segments;
    log(
      `tuning the live index: ${index.ntotal} built + ${updates.nextId - index.ntotal} added sentences ` +
        `(${segments.reduce((a, x) => a + x.count, 0)} in ${segments.length} sealed segments, ` +
        `${live.segmentSize} growing), ${tombstones.size} deleted`,
    );
    return {
      index: live,
      source: appendedSource(source, updates.nextId, (ids) => updates.vectorsOf(ids)),
      close: async () => {
        await live.close();
        await updates.close();
      },
    };
  };
}

/** One line per point: the table `paramine tune` prints (and BENCHMARKS.md quotes). */
export function formatPoints(points: readonly OperatingPoint[], chosen?: OperatingPoint): string[] {
  const head = '  nprobe  efSearch  kFactor  recall@k   p50 ms   p99 ms';
  return [
    head,
    ...points.map(
      (p) =>
        `  ${String(p.nprobe).padStart(6)}  ${String(p.efSearch ?? '-').padStart(8)}  ${String(p.kFactor).padStart(7)}` +
        `  ${p.recall.toFixed(4).padStart(8)}  ${p.p50Ms.toFixed(3).padStart(7)}  ${p.p99Ms.toFixed(3).padStart(7)}` +
        (p === chosen ? '  <- default' : ''),
    ),
  ];
}

/** Runs the tuning with progress bars; returns what it measured. */
export async function runTune(input: TuneCommandOptions, log: (line: string) => void): Promise<TuneResult> {
  const o = parseInput(tuneOptionsSchema, input, 'options');
  if (o.threads !== undefined) setNumThreads(o.threads);
  const truth = createProgress({ label: 'exact top-k', unit: 'vectors', quiet: o.quiet });
  const sweep = createProgress({ label: 'tuning', unit: 'settings', quiet: o.quiet });
  const result = await tuneIndexDir(o.index, {
    queries: o.queries,
    targetRecall: o.targetRecall,
    k: o.k,
    latencyQueries: o.latencyQueries,
    seed: o.seed,
    // Deleted sentences are neither queries nor neighbours (a rebuild zeroed the rows it removed).
    skipIds: deletedIds(o.index),
    view: liveView(o.index, log),
    sweep: o.full ? 'full' : 'target',
    onProgress: (p) => {
      if (p.stage === 'truth') {
        truth.update(p.done, p.total);
        if (p.done === p.total) truth.stop();
      } else sweep.update(p.done, p.total);
    },
  });
  sweep.stop();
  const t = result.tuning;
  log(
    `tuned ${o.index}: ${t.settings} settings on ${t.queries} held-out queries (latency on ${t.latencyQueries}, ` +
      `${t.threads} threads) in ${formatDuration(t.ms / 1000)}; operating points (Pareto front):`,
  );
  for (const line of formatPoints(result.front, result.chosen)) log(line);
  const c = result.chosen;
  log(
    t.reached
      ? `search defaults: nprobe ${c.nprobe}${c.efSearch ? `, efSearch ${c.efSearch}` : ''}, kFactor ${c.kFactor} ` +
          `(cheapest reaching recall@${t.k} ${t.targetRecall})`
      : `no setting reached recall@${t.k} ${t.targetRecall}; defaults are the cheapest point within the sample's error of the most accurate (recall ${c.recall}; nprobe ${c.nprobe}, kFactor ${c.kFactor})`,
  );
  return result;
}

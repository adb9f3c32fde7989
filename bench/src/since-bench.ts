/**
 * Mining what is new (issue #30, BENCHMARKS.md "Writes"): an index over `--n` sentences of ../shared/data
 * (ParaSCI-ACL, then MultiPIT_Auto; all-MiniLM-L6-v2), then a day's `--day` share of new ones added. In
 * one invocation, same process and settings: the full re-mine of everything against the `since` job over
 * the day's sentences, and whether `since` returned exactly the re-mine's pairs that involve a new one;
 * then, with a tenth of the day's count of built sentences deleted too, `index --compact` (the day folded
 * in and the deletes applied, trained quantizers kept) and `index --rebuild` (retrained from the kept
 * vectors), each on its own copy of the same index, against the build's time.
 *
 *   npm run lab -- since [--n 20000] [--day 0.01] [--k 10] [--min-cosine 0.7]
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineBenchmark, type Log } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { buildIndex } from '../../dist/indexer/build.js';
import { rebuildIndex } from '../../dist/indexer/rebuild.js';
import { pairKey } from '../../dist/jobs/index.js';
import { openService } from '../../dist/service/index.js';
import { sampleSentences } from './shared-sentences.js';

const schema = z.object({
  n: z.coerce.number().int().min(1000),
  day: z.coerce.number().gt(0).lt(1),
  k: z.coerce.number().int().min(1).max(100),
  minCosine: z.coerce.number().min(-1).max(1),
  factory: z.string().min(1),
});
type Options = z.output<typeof schema>;

async function run(o: Options, log: Log) {
  const loadBefore = loadavg();
  const dayN = Math.max(1, Math.round(o.n * o.day));
  const sentences = await sampleSentences(o.n + dayN);
  const dir = mkdtempSync(join(tmpdir(), 'paramine-since-bench-'));
  try {
    const input = join(dir, 'corpus.txt');
    writeFileSync(input, `${sentences.slice(0, o.n).join('\n')}\n`);
    log(`building an index over ${o.n} sentences`);
    const b0 = performance.now();
    await buildIndex({
      inputs: [input],
      out: join(dir, 'index'),
      model: 'all-minilm-l6-v2',
      factory: o.factory,
      quiet: true,
    });
    const buildSeconds = (performance.now() - b0) / 1000;
    const service = await openService({ index: join(dir, 'index'), reranker: false });
    let result: Omit<Result, 'rebuild' | 'compact'>;
    try {
      const { manager, store } = service.openJobs({ dir: join(dir, 'jobs') });
      const spec = { k: o.k, minCosine: o.minCosine, batchSize: 256 };
      const mine = async (extra: Record<string, unknown>) => {
        const t0 = performance.now();
        const job = await manager.wait((await manager.create({ ...spec, ...extra })).id);
        const seconds = (performance.now() - t0) / 1000;
        if (job.state !== 'done') throw new Error(`job ${job.state}: ${job.error?.message}`);
        const keys = new Set<string>();
        for (const { pair } of store.pairs(job.id))
          keys.add(pairKey(pair.a.id as number, pair.b.id as number));
        return { seconds, queried: job.total, pairs: keys };
      };
      const seq = service.writes.stats.seq;
      // Deletes for the compaction to apply (after the mining: the pairs compared are the day's adds').
      const deletes = Array.from({ length: Math.max(1, Math.round(dayN / 10)) }, (_, i) => i * 7);
      log(`adding the day's ${dayN} sentences`);
      const added = await service.writes.add(sentences.slice(o.n).map((text) => ({ text })));
      const firstNew = Math.min(...added.filter((a) => a.status === 'added').map((a) => a.id));
      log('the full re-mine');
      const full = await mine({});
      log("mining the day's sentences (since)");
      const since = await mine({ since: { seq } });
      const expected = [...full.pairs].filter((key) => key.split(':').some((id) => Number(id) >= firstNew));
      const missing = expected.filter((key) => !since.pairs.has(key)).length;
      const extra = [...since.pairs].filter((key) => !expected.includes(key)).length;
      await manager.close();
      await store.close();
      await service.writes.delete(deletes);
      result = {
        benchmark: 'since',
        machine: machineInfo(loadBefore),
        options: o,
        sentences: o.n + dayN,
        day: dayN,
        full: { seconds: full.seconds, queried: full.queried, pairs: full.pairs.size },
        since: { seconds: since.seconds, queried: since.queried, pairs: since.pairs.size },
        newPairsInFull: expected.length,
        missing,
        extra,
        costRatio: since.seconds / full.seconds,
      };
    } finally {
      await service.close();
    }
    cpSync(join(dir, 'index'), join(dir, 'copy'), { recursive: true });
    const timed = async (what: string, index: string, retrain: boolean) => {
      log(`index --${what}: the day folded in, the deletes applied`);
      const t0 = performance.now();
      const r = await rebuildIndex(index, () => {}, undefined, { retrain });
      const seconds = (performance.now() - t0) / 1000;
      return { seconds, buildSeconds, ratio: seconds / buildSeconds, deleted: r.deleted, folded: r.folded };
    };
    const compact = await timed('compact', join(dir, 'copy'), false);
    const rebuild = await timed('rebuild', join(dir, 'index'), true);
    return { ...result, compact, rebuild };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Result {
  benchmark: string;
  machine: ReturnType<typeof machineInfo>;
  options: Options;
  sentences: number;
  day: number;
  full: { seconds: number; queried: number; pairs: number };
  since: { seconds: number; queried: number; pairs: number };
  newPairsInFull: number;
  missing: number;
  extra: number;
  costRatio: number;
  compact: Refold;
  rebuild: Refold;
}

interface Refold {
  seconds: number;
  buildSeconds: number;
  ratio: number;
  deleted: number;
  folded: number;
}

function markdown(r: Result): string {
  const f = (x: number) => x.toFixed(2);
  return [
    `| ${r.sentences} sentences, the day's ${r.day} new (k ${r.options.k}, minCosine ${r.options.minCosine}) | wall | sentences queried | pairs |`,
    '|---|---:|---:|---:|',
    `| full re-mine | ${f(r.full.seconds)} s | ${r.full.queried} | ${r.full.pairs} (${r.newPairsInFull} with a new sentence) |`,
    `| since (the day's sentences) | ${f(r.since.seconds)} s (${(100 * r.costRatio).toFixed(1)}%) | ${r.since.queried} | ${r.since.pairs} (missing ${r.missing}, extra ${r.extra}) |`,
    '',
    `| the day's ${r.compact.folded} folded in, ${r.compact.deleted} deleted applied | wall | of the build's ${f(r.rebuild.buildSeconds)} s |`,
    '|---|---:|---:|',
    `| \`index --compact\` (trained quantizers kept) | ${f(r.compact.seconds)} s | ${(100 * r.compact.ratio).toFixed(1)}% |`,
    `| \`index --rebuild\` (retrained, tuned) | ${f(r.rebuild.seconds)} s | ${(100 * r.rebuild.ratio).toFixed(1)}% |`,
    '',
  ].join('\n');
}

export const sinceBench = defineBenchmark({
  name: 'since',
  description:
    "mining a day's new sentences (since) against re-mining everything, and whether the pairs agree",
  options: (cmd) =>
    cmd
      .option('--n <n>', 'sentences in the index before the day', '20000')
      .option('--day <share>', "the day's new sentences as a share of n", '0.01')
      .option('--k <n>', 'neighbours per sentence', '10')
      .option('--min-cosine <x>', 'pairs below this cosine are dropped', '0.7')
      .option('--factory <str>', "the build's FAISS factory (auto: the planner's choice)", 'auto'),
  schema,
  run: async (o, log) => {
    const r = await run(o, log);
    return { result: r, markdown: markdown(r) };
  },
});

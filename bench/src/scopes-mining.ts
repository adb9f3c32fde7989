/**
 * Scoped mining benchmarks (BENCHMARKS.md, "Scopes"), through the harness:
 *
 *   npm run lab -- scopes-nmr [--fillers 8000]   group-scoped vs global mining, MultiPIT NMR sets
 *   (sub-sentence pairs: subsentence-bench.ts)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { type BenchOutput, defineBenchmark } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { readPairs } from '../../dist/corpus/index.js';
import { prng } from '../../dist/index/index.js';
import { buildIndex } from '../../dist/indexer/build.js';
import { type MinedPair, pairKey } from '../../dist/jobs/index.js';
import { openService } from '../../dist/service/index.js';
import { parseGroupKeySpec } from '../../dist/store/index.js';

const data = z.string().min(1);
const nmrSchema = z.object({
  data,
  fillers: z.coerce.number().int().min(0),
  k: z.coerce.number().int().min(1),
  minCosine: z.coerce.number().min(-1).max(1),
});
export const DATA = process.env.PARAMINE_DATA ?? '../shared/data';

/** Runs mining jobs one after another on a fresh service over `index`; their pairs and times. */
export async function mine(
  index: string,
  specs: Record<string, object>,
  dataDir?: string,
): Promise<Record<string, { pairs: MinedPair[]; seconds: number }>> {
  const service = await openService({ index, reranker: false });
  // The jobs' store is read here and removed after: a kept work directory would gather one a run.
  const jobsDir = join(index, '..', `jobs-${Date.now()}`);
  const jobs = service.openJobs({ dir: jobsDir, dataDir });
  const out: Record<string, { pairs: MinedPair[]; seconds: number }> = {};
  try {
    for (const [name, spec] of Object.entries(specs)) {
      const t0 = performance.now();
      const job = await jobs.manager.wait((await jobs.manager.create(spec)).id, undefined, 50);
      const seconds = (performance.now() - t0) / 1000;
      out[name] = { pairs: [...jobs.store.pairs(job.id)].map((p) => p.pair), seconds };
    }
  } finally {
    await service.close();
    rmSync(jobsDir, { recursive: true, force: true });
  }
  return out;
}

/** The NMR sets as trends of their own, and MultiPIT_Auto fillers spread over those trends and as many more. */
async function nmrRows(data: string, fillers: number) {
  const sets = Object.entries(
    JSON.parse(readFileSync(join(data, 'multipit/nmr/nmr.json'), 'utf8')) as Record<string, string[]>,
  );
  const rand = prng(7);
  const rows: Array<{ text: string; trend: string; set?: number }> = [];
  sets.forEach(([src, refs], i) => {
    for (const text of [src, ...refs]) rows.push({ text, trend: `t${i}`, set: i });
  });
  const nmrTexts = new Set(rows.map((r) => r.text));
  const auto = await readPairs(join(data, 'multipit/auto/train.csv'));
  const seen = new Set<string>();
  for (const p of auto) {
    for (const text of [p.s1, p.s2]) {
      if (seen.size >= fillers) break;
      if (seen.has(text) || nmrTexts.has(text)) continue;
      seen.add(text);
      // Fillers land on the NMR trends and on as many other trends.
      rows.push({ text, trend: `t${Math.floor(rand() * sets.length * 2)}` });
    }
  }
  return { sets, rows, nmrTexts, fillers: seen };
}

/** MultiPIT NMR: each source and its references one trend, mixed into MultiPIT_Auto sentences on random trends. */
async function nmr(o: z.output<typeof nmrSchema>): Promise<BenchOutput<Record<string, unknown>>> {
  const { sets, rows, nmrTexts, fillers: seen } = await nmrRows(o.data, o.fillers);
  const loadBefore = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'paramine-scopes-nmr-'));
  try {
    const corpus = join(dir, 'corpus.jsonl');
    writeFileSync(corpus, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const index = join(dir, 'index');
    const t0 = performance.now();
    await buildIndex({
      inputs: [corpus],
      out: index,
      model: 'all-minilm-l6-v2',
      quiet: true,
      groupKeys: [parseGroupKeySpec('trend')],
    });
    const buildSeconds = (performance.now() - t0) / 1000;
    const { k, minCosine } = o;
    const runs = await mine(index, {
      global: { k, minCosine, batchSize: 256 },
      withinTrend: { k, minCosine, withinGroup: 'trend', batchSize: 256 },
    });
    // Gold: every pair inside one NMR set.
    const setOf = new Map<string, number>();
    for (const r of rows) if (r.set !== undefined) setOf.set(r.text, r.set);
    let gold = 0;
    for (const [, refs] of sets) gold += ((refs.length + 1) * refs.length) / 2;
    const result: Record<string, unknown> = {
      machine: machineInfo(loadBefore),
      sentences: rows.length,
      nmrSentences: nmrTexts.size,
      fillers: seen.size,
      goldPairs: gold,
      k,
      minCosine,
      buildSeconds,
    };
    const lines = [
      '| mining | time (s) | pairs | pairs touching an NMR set | gold found | precision | recall |',
      '|---|---|---|---|---|---|---|',
    ];
    for (const [name, r] of Object.entries(runs)) {
      const touching = r.pairs.filter((p) => setOf.has(p.a.text) || setOf.has(p.b.text));
      const hit = new Set(
        touching
          .filter((p) => setOf.has(p.a.text) && setOf.get(p.a.text) === setOf.get(p.b.text))
          .map((p) => pairKey(p.a.id as number, p.b.id as number)),
      ).size;
      const precision = touching.length === 0 ? 0 : hit / touching.length;
      const recall = hit / gold;
      result[name] = {
        seconds: r.seconds,
        pairs: r.pairs.length,
        touching: touching.length,
        hit,
        precision,
        recall,
      };
      lines.push(
        `| ${name} | ${r.seconds.toFixed(1)} | ${r.pairs.length} | ${touching.length} | ${hit} | ${precision.toFixed(3)} | ${recall.toFixed(3)} |`,
      );
    }
    return { result, markdown: `${lines.join('\n')}\n` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const scopesNmr = defineBenchmark({
  name: 'scopes-nmr',
  description: 'group-scoped vs global mining on MultiPIT multi-reference sets (time, P/R of the sets)',
  options: (cmd) =>
    cmd
      .option('--data <dir>', 'the shared data folder', DATA)
      .option('--fillers <n>', 'MultiPIT_Auto sentences mixed in on random trends', '8000')
      .option('--k <n>', 'neighbours per sentence', '10')
      .option('--min-cosine <c>', 'cosine threshold of the mining jobs', '0.5'),
  schema: nmrSchema,
  run: nmr,
});

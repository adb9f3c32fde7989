/**
 * Scoped mining benchmarks (BENCHMARKS.md, "Scopes"), through the harness:
 *
 *   paramine bench scopes-nmr [--fillers 8000]   group-scoped vs global mining, MultiPIT NMR sets
 *   paramine bench scopes-subsentence            extra pairs from best-clause spans on ParaSCI
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { readPairs } from '../corpus/index.js';
import { prng } from '../index/index.js';
import { buildIndex } from '../indexer/build.js';
import { type MinedPair, pairKey } from '../jobs/index.js';
import { PARASCI_COSINE } from '../jobs/spec.js';
import { openService } from '../service/index.js';
import { parseGroupKeySpec } from '../store/index.js';
import { type BenchOutput, defineBenchmark } from './harness.js';
import { machineInfo } from './machine.js';

const data = z.string().min(1);
const nmrSchema = z.object({
  data,
  fillers: z.coerce.number().int().min(0),
  k: z.coerce.number().int().min(1),
  minCosine: z.coerce.number().min(-1).max(1),
});
const subSchema = z.object({
  data,
  minCosine: z.coerce.number().min(-1).max(1),
  spanCosine: z.coerce.number().min(-1).max(1),
});
const DATA = process.env.PARAMINE_DATA ?? '../shared/data';

async function mine(
  index: string,
  specs: Record<string, object>,
): Promise<Record<string, { pairs: MinedPair[]; seconds: number }>> {
  const service = await openService({ index, reranker: false });
  const jobs = service.openJobs({ dir: join(index, '..', `jobs-${Date.now()}`) });
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

/** Whole-sentence mining vs the same plus best-clause spans, on ParaSCI-ACL val sentences. */
async function subsentence(o: z.output<typeof subSchema>): Promise<BenchOutput<Record<string, unknown>>> {
  const loadBefore = loadavg();
  const pairs = await readPairs(join(o.data, 'parasci/acl/val.src'));
  const dir = mkdtempSync(join(tmpdir(), 'paramine-scopes-sub-'));
  try {
    const corpus = join(dir, 'corpus.txt');
    writeFileSync(corpus, `${[...new Set(pairs.flatMap((p) => [p.s1, p.s2]))].join('\n')}\n`);
    const index = join(dir, 'index');
    await buildIndex({ inputs: [corpus], out: index, model: 'all-minilm-l6-v2', quiet: true });
    const { minCosine } = o;
    const base = { k: 5, minCosine, filter: { plrMax: 1 }, batchSize: 256 };
    const runs = await mine(index, {
      whole: base,
      bestClause: { ...base, subSentence: { method: 'best-clause', minCosine: o.spanCosine } },
    });
    const goldKey = new Set(pairs.map((p) => [p.s1, p.s2].sort().join('\u0000')));
    const isGold = (p: MinedPair) => goldKey.has([p.a.text, p.b.text].sort().join('\u0000'));
    const whole = runs.whole?.pairs ?? [];
    const withSpans = runs.bestClause?.pairs ?? [];
    const spans = withSpans.filter((p) => p.span !== undefined);
    const result = {
      machine: machineInfo(loadBefore),
      sentences: new Set(pairs.flatMap((p) => [p.s1, p.s2])).size,
      wholePairs: whole.length,
      wholeGold: whole.filter(isGold).length,
      extraSpanPairs: spans.length,
      extraSpanPairsOfGold: spans.filter(isGold).length,
      meanSpanCosine: spans.reduce((s, p) => s + (p.span?.cosine ?? 0), 0) / Math.max(1, spans.length),
      seconds: { whole: runs.whole?.seconds, bestClause: runs.bestClause?.seconds },
      examples: spans.slice(0, 8).map((p) => {
        const s = p.span as NonNullable<MinedPair['span']>;
        const short = s.side === 'a' ? p.b.text : p.a.text;
        const long = s.side === 'a' ? p.a.text : p.b.text;
        return { short, span: long.slice(s.start, s.end), long, cosine: s.cosine };
      }),
    };
    const markdown = [
      '| mining | pairs | of them ParaSCI-ACL val pairs | time (s) |',
      '|---|---:|---:|---:|',
      `| whole sentences | ${result.wholePairs} | ${result.wholeGold} | ${(result.seconds.whole ?? 0).toFixed(1)} |`,
      `| + best-clause spans (extra) | ${result.extraSpanPairs} | ${result.extraSpanPairsOfGold} | ${(result.seconds.bestClause ?? 0).toFixed(1)} |`,
      '',
    ].join('\n');
    return { result, markdown };
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

export const scopesSubsentence = defineBenchmark({
  name: 'scopes-subsentence',
  description: 'whole-sentence mining vs the same plus best-clause spans on ParaSCI-ACL val sentences',
  options: (cmd) =>
    cmd
      .option('--data <dir>', 'the shared data folder', DATA)
      .option(
        '--min-cosine <c>',
        "cosine threshold (the parasci preset's by default)",
        String(PARASCI_COSINE),
      )
      .option('--span-cosine <c>', 'cosine a best-clause span needs', '0.7'),
  schema: subSchema,
  run: subsentence,
});

/**
 * Sub-sentence pairs on ParaSCI (BENCHMARKS.md, "Sub-sentence pairs"; ParaSCI's Table 3): whole-sentence
 * mining of ParaSCI-ACL val's sentences, then the same job with best-clause spans and with the span model,
 * each method's extra pairs counted and their quality given as BERTScore F1 of (shorter sentence, span)
 * from the encoder's token vectors (no idf), mean and share above ParaSCI's 0.7 filter.
 *
 *   npm run lab -- scopes-subsentence [--methods best-clause,span] [--span-model NAME]
 *        [--min-cosine 0.42] [--span-cosine 0.7]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { type BenchOutput, defineBenchmark, list } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { readPairs } from '../../dist/corpus/index.js';
import { bertScore, Encoder } from '../../dist/encode/index.js';
import { buildIndex } from '../../dist/indexer/build.js';
import type { MinedPair } from '../../dist/jobs/index.js';
import { DEFAULT_SPAN_MODEL, PARASCI_COSINE } from '../../dist/jobs/spec.js';
import { resolveModelDir } from '../../dist/models/resolve.js';
import { DATA, mine } from './scopes-mining.js';

const schema = z.object({
  data: z.string().min(1),
  methods: z
    .string()
    .transform(list)
    .pipe(z.array(z.enum(['best-clause', 'span'])).min(1)),
  spanModel: z.string().min(1),
  minCosine: z.coerce.number().min(-1).max(1),
  spanCosine: z.coerce.number().min(-1).max(1),
});

/** (shorter, span) of a sub-sentence pair. */
function spanPair(p: MinedPair): { short: string; span: string; long: string } {
  const s = p.span as NonNullable<MinedPair['span']>;
  const long = s.side === 'a' ? p.a.text : p.b.text;
  return { short: s.side === 'a' ? p.b.text : p.a.text, span: long.slice(s.start, s.end), long };
}

/** BERTScore F1 of each (shorter, span) with the index's encoder. */
async function bertScores(pairs: MinedPair[]): Promise<number[]> {
  if (pairs.length === 0) return [];
  const encoder = await Encoder.open(resolveModelDir('all-minilm-l6-v2'));
  try {
    const texts = pairs.flatMap((p) => {
      const s = spanPair(p);
      return [s.short, s.span];
    });
    const tv = await encoder.encodeTokens(texts);
    return pairs.map((_, i) => bertScore(tv, 2 * i, 2 * i + 1).f1);
  } finally {
    await encoder.close();
  }
}

async function subsentence(o: z.output<typeof schema>): Promise<BenchOutput<Record<string, unknown>>> {
  const loadBefore = loadavg();
  const pairs = await readPairs(join(o.data, 'parasci/acl/val.src'));
  const { methods, spanModel, minCosine, spanCosine } = o;
  const dir = mkdtempSync(join(tmpdir(), 'paramine-scopes-sub-'));
  try {
    const corpus = join(dir, 'corpus.txt');
    writeFileSync(corpus, `${[...new Set(pairs.flatMap((p) => [p.s1, p.s2]))].join('\n')}\n`);
    const index = join(dir, 'index');
    await buildIndex({ inputs: [corpus], out: index, model: 'all-minilm-l6-v2', quiet: true });
    const base = { k: 5, minCosine, filter: { plrMax: 1 }, batchSize: 256 };
    const specs: Record<string, object> = { whole: base };
    if (methods.includes('best-clause'))
      specs['best-clause'] = { ...base, subSentence: { method: 'best-clause', minCosine: spanCosine } };
    if (methods.includes('span'))
      specs.span = { ...base, subSentence: { method: 'span', model: spanModel, minCosine: spanCosine } };
    const runs = await mine(index, specs);
    const goldKey = new Set(pairs.map((p) => [p.s1, p.s2].sort().join('\u0000')));
    const isGold = (p: MinedPair) => goldKey.has([p.a.text, p.b.text].sort().join('\u0000'));
    const whole = runs.whole?.pairs ?? [];
    const perMethod: Record<string, MethodRow> = {};
    for (const m of Object.keys(specs).filter((k) => k !== 'whole')) {
      const spans = (runs[m]?.pairs ?? []).filter((p) => p.span !== undefined);
      const f1 = await bertScores(spans);
      perMethod[m] = {
        extraSpanPairs: spans.length,
        extraSpanPairsOfGold: spans.filter(isGold).length,
        meanSpanCosine: spans.reduce((s, p) => s + (p.span?.cosine ?? 0), 0) / Math.max(1, spans.length),
        meanBertScoreF1: f1.reduce((s, x) => s + x, 0) / Math.max(1, f1.length),
        bertScoreAbove07: f1.filter((x) => x > 0.7).length,
        seconds: runs[m]?.seconds,
        examples: spans
          .slice(0, 6)
          .map((p, i) => ({ ...spanPair(p), cosine: p.span?.cosine, bertScore: f1[i] })),
      };
    }
    const result = {
      machine: machineInfo(loadBefore),
      sentences: new Set(pairs.flatMap((p) => [p.s1, p.s2])).size,
      spanModel: methods.includes('span') ? spanModel : undefined,
      wholePairs: whole.length,
      wholeGold: whole.filter(isGold).length,
      wholeSeconds: runs.whole?.seconds,
      methods: perMethod,
    };
    return { result, markdown: markdown(result.wholePairs, result.wholeGold, perMethod) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface MethodRow {
  extraSpanPairs: number;
  extraSpanPairsOfGold: number;
  meanSpanCosine: number;
  meanBertScoreF1: number;
  bertScoreAbove07: number;
  seconds: number | undefined;
  examples: object[];
}

function markdown(whole: number, wholeGold: number, rows: Record<string, MethodRow>): string {
  return [
    '| method | extra pairs | of them ParaSCI val pairs | mean BERTScore F1 | BERTScore > 0.7 | time (s) |',
    '|---|---:|---:|---:|---:|---:|',
    `| whole sentences | ${whole} | ${wholeGold} | – | – | – |`,
    ...Object.entries(rows).map(
      ([m, r]) =>
        `| ${m} | ${r.extraSpanPairs} | ${r.extraSpanPairsOfGold} | ${r.extraSpanPairs ? r.meanBertScoreF1.toFixed(3) : '–'} | ${r.bertScoreAbove07} | ${(r.seconds ?? 0).toFixed(0)} |`,
    ),
    '',
  ].join('\n');
}

export const scopesSubsentence = defineBenchmark({
  name: 'scopes-subsentence',
  description: 'whole-sentence mining vs the same plus best-clause / span-model spans on ParaSCI-ACL val',
  options: (cmd) =>
    cmd
      .option('--data <dir>', 'the shared data folder', DATA)
      .option('--methods <list>', 'best-clause, span, or both', 'best-clause,span')
      .option('--span-model <name>', 'span model (paramine models list)', DEFAULT_SPAN_MODEL)
      .option(
        '--min-cosine <c>',
        "cosine threshold (the parasci preset's by default)",
        String(PARASCI_COSINE),
      )
      .option('--span-cosine <c>', 'cosine a span needs', '0.7'),
  schema,
  run: subsentence,
});

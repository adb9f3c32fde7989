/**
 * Sub-sentence pairs on ParaSCI (BENCHMARKS.md, "Sub-sentence pairs"; ParaSCI's Table 3): whole-sentence
 * mining of ParaSCI-ACL val's sentences, then the same job with best-clause spans and with the span model,
 * each method's extra pairs counted and their quality given as BERTScore F1 of (shorter sentence, span)
 * from the encoder's token vectors (no idf), mean and share above ParaSCI's 0.7 filter.
 *
 *   node dist/bench/scopes-bench.js subsentence [--methods best-clause,span] [--span-model NAME]
 *        [--min-cosine 0.42] [--span-cosine 0.7]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPairs } from '../corpus/index.js';
import { bertScore, Encoder } from '../encode/index.js';
import { buildIndex } from '../indexer/build.js';
import type { MinedPair } from '../jobs/index.js';
import { DEFAULT_SPAN_MODEL, PARASCI_COSINE } from '../jobs/spec.js';
import { resolveModelDir } from '../models/resolve.js';

type Mine = (
  index: string,
  specs: Record<string, object>,
) => Promise<Record<string, { pairs: MinedPair[]; seconds: number }>>;

const text = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : (process.argv[i + 1] ?? def);
};

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

export async function subsentence(opts: {
  data: string;
  arg: (name: string, def: number) => number;
  mine: Mine;
  machine: () => string;
  save: (name: string, result: object) => void;
}): Promise<void> {
  const { arg } = opts;
  const pairs = await readPairs(join(opts.data, 'parasci/acl/val.src'));
  const methods = text('methods', 'best-clause,span').split(',');
  const spanModel = text('span-model', DEFAULT_SPAN_MODEL);
  const dir = mkdtempSync(join(tmpdir(), 'paramine-scopes-sub-'));
  try {
    const corpus = join(dir, 'corpus.txt');
    writeFileSync(corpus, `${[...new Set(pairs.flatMap((p) => [p.s1, p.s2]))].join('\n')}\n`);
    const index = join(dir, 'index');
    await buildIndex({ inputs: [corpus], out: index, model: 'all-minilm-l6-v2', quiet: true });
    const minCosine = arg('min-cosine', PARASCI_COSINE);
    const spanCosine = arg('span-cosine', 0.7);
    const base = { k: 5, minCosine, filter: { plrMax: 1 }, batchSize: 256 };
    const specs: Record<string, object> = { whole: base };
    if (methods.includes('best-clause'))
      specs['best-clause'] = { ...base, subSentence: { method: 'best-clause', minCosine: spanCosine } };
    if (methods.includes('span'))
      specs.span = { ...base, subSentence: { method: 'span', model: spanModel, minCosine: spanCosine } };
    const runs = await opts.mine(index, specs);
    const goldKey = new Set(pairs.map((p) => [p.s1, p.s2].sort().join('\u0000')));
    const isGold = (p: MinedPair) => goldKey.has([p.a.text, p.b.text].sort().join('\u0000'));
    const whole = runs.whole?.pairs ?? [];
    const perMethod: Record<string, object> = {};
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
      machine: opts.machine(),
      sentences: new Set(pairs.flatMap((p) => [p.s1, p.s2])).size,
      spanModel: methods.includes('span') ? spanModel : undefined,
      wholePairs: whole.length,
      wholeGold: whole.filter(isGold).length,
      wholeSeconds: runs.whole?.seconds,
      methods: perMethod,
    };
    opts.save('subsentence', result);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `npm run lab -- domain-speed`: what domain scoring and the BERTScore filter cost (BENCHMARKS.md
 * "Domain-specific mining"), as CPU time of this process (robust on a shared machine) with a reference
 * measured in the same invocation:
 *  - Moore–Lewis σ per sentence (two 5-gram LMs) against tokenize() alone on the same sentences;
 *  - BERTScore of 1,000 pairs (token vectors + greedy F1) against pooled encoding of the same texts.
 *
 *   npm run lab -- domain-speed --data ../shared/data --json out.json
 */
import { join } from 'node:path';
import { z } from 'zod';
import { defineBenchmark } from '../../dist/bench/harness.js';
import { readPairs } from '../../dist/corpus/index.js';
import { trainMooreLewis } from '../../dist/domain/train.js';
import { bertScore, Encoder } from '../../dist/encode/index.js';
import { resolveModelDir } from '../../dist/models/resolve.js';
import { normalize, tokenize } from '../../dist/text/index.js';

const schema = z.object({
  data: z.string().min(1),
  model: z.string().min(1),
  n: z.coerce.number().int().min(2),
  pairs: z.coerce.number().int().min(1),
});

const cpu = async (run: () => unknown) => {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await run();
  const c = process.cpuUsage(c0);
  return { cpuS: (c.user + c.system) / 1e6, wallS: (performance.now() - t0) / 1000 };
};

/** Moore–Lewis scoring of n sentences (half MultiPIT, half ParaSCI) against tokenizing them. */
async function scoring(data: string, n: number) {
  const parasci = await readPairs(join(data, 'parasci/acl/train.src'));
  const multipit = await readPairs(join(data, 'multipit/auto/train.csv'));
  const inDomain = [...new Set(parasci.map((p) => normalize(p.s1)))];
  // The general sample: as many distinct MultiPIT_Auto sentences (its sources repeat, so both sides).
  const general = [
    ...new Set(multipit.slice(0, 20000).flatMap((p) => [normalize(p.s1), normalize(p.s2)])),
  ].slice(0, inDomain.length);
  let scorer: ReturnType<typeof trainMooreLewis> | undefined;
  const train = await cpu(() => {
    scorer = trainMooreLewis(inDomain, general, { order: 5, minCount: 2 });
  });
  const texts = [
    ...multipit.slice(20000, 20000 + n / 2).map((p) => normalize(p.s2)),
    ...inDomain.slice(0, n / 2),
  ];
  const tok = await cpu(() => {
    for (const t of texts) tokenize(t);
  });
  const ml = scorer as NonNullable<typeof scorer>;
  const score = await cpu(() => {
    for (let i = 0; i < texts.length; i += 1000) ml.score(texts.slice(i, i + 1000));
  });
  const perCore = texts.length / score.cpuS;
  return {
    lm: { ...ml.inDomain.info, general: ml.general.info.ngrams, trainCpuS: train.cpuS },
    scoring: {
      sentences: texts.length,
      cpuS: score.cpuS,
      wallS: score.wallS,
      sentencesPerCpuSecond: perCore,
      tokenizeCpuS: tok.cpuS,
      scoringOverTokenize: score.cpuS / tok.cpuS,
      at4e8: { coreHours: 4e8 / perCore / 3600, diskBytes: 4e8 * 8 },
    },
  };
}

/** BERTScore of ParaSCI val pairs against pooled encoding of the same texts. */
async function bertscoreCost(data: string, model: string, n: number) {
  const val = (await readPairs(join(data, 'parasci/acl/val.src'))).slice(0, n);
  const a = val.map((p) => normalize(p.s1));
  const b = val.map((p) => normalize(p.s2));
  const encoder = await Encoder.open(resolveModelDir(model), { spinning: false });
  await encoder.encode(a.slice(0, 32));
  const pooled = await cpu(async () => {
    for (let i = 0; i < a.length; i += 256)
      await encoder.encode([...a.slice(i, i + 256), ...b.slice(i, i + 256)]);
  });
  const bs = await cpu(async () => {
    for (let i = 0; i < a.length; i += 256) {
      const l = a.slice(i, i + 256);
      const tv = await encoder.encodeTokens([...l, ...b.slice(i, i + 256)]);
      for (let k = 0; k < l.length; k++) bertScore(tv, k, l.length + k);
    }
  });
  await encoder.close();
  return {
    pairs: a.length,
    cpuSPer1000: (bs.cpuS / a.length) * 1000,
    wallSPer1000: (bs.wallS / a.length) * 1000,
    pooledEncodeCpuSPer1000: (pooled.cpuS / a.length) * 1000,
    ratioToPooledEncoding: bs.cpuS / pooled.cpuS,
  };
}

export const domainSpeed = defineBenchmark({
  name: 'domain-speed',
  description: 'CPU cost of Moore–Lewis domain scores and of the BERTScore filter, each beside a reference',
  options: (cmd) =>
    cmd
      .option('--data <dir>', 'the shared data directory', '../shared/data')
      .option('--model <name|dir>', 'encoder', 'all-minilm-l6-v2')
      .option('--n <n>', 'sentences to score', '20000')
      .option('--pairs <n>', 'pairs to BERTScore', '1000'),
  schema,
  async run(o) {
    const result = {
      ...(await scoring(o.data, o.n)),
      bertscore: await bertscoreCost(o.data, o.model, o.pairs),
    };
    const s = result.scoring;
    const b = result.bertscore;
    const markdown = [
      '| what | CPU | reference | ratio |',
      '|---|---|---|---|',
      `| Moore–Lewis σ, ${s.sentences} sentences | ${s.cpuS.toFixed(2)} s (${Math.round(s.sentencesPerCpuSecond)}/core-s) | tokenize ${s.tokenizeCpuS.toFixed(2)} s | ${s.scoringOverTokenize.toFixed(1)}× |`,
      `| BERTScore, per 1,000 pairs | ${b.cpuSPer1000.toFixed(2)} s | pooled encoding ${b.pooledEncodeCpuSPer1000.toFixed(2)} s | ${b.ratioToPooledEncoding.toFixed(2)}× |`,
    ].join('\n');
    return { result, markdown };
  },
});

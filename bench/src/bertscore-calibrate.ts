/**
 * `npm run lab -- bertscore-calibrate`: the BERTScore thresholds of the ParaSCI presets for our encoder
 * (docs/bertscore.md). BERTScore F1 of ParaSCI val pairs and of as many random pairs (a source sentence with
 * another pair's target), then ParaSCI's SciBERT thresholds (0.7; 0.6 for definitions) carried over by
 * bert_score's own baseline rescaling: a threshold t sits at r = (t − b) / (1 − b) between the random-pair
 * mean b and an identical pair (1). SciBERT's b = 0.5322 (bert_score's en-sci baseline, layer 8, the default
 * layer for scibert-scivocab-uncased); ours is measured here, so t' = b' + r (1 − b'). Also the cost per
 * 1,000 pairs.
 *
 *   npm run lab -- bertscore-calibrate --pairs ../shared/data/parasci/acl/val.src --json out.json
 */
import { z } from 'zod';
import { defineBenchmark } from '../../dist/bench/harness.js';
import { readPairs } from '../../dist/corpus/index.js';
import { bertScore, Encoder } from '../../dist/encode/index.js';
import { prng } from '../../dist/index/index.js';
import { resolveModelDir } from '../../dist/models/resolve.js';
import { normalize } from '../../dist/text/index.js';

/** bert_score's rescale baseline for allenai/scibert_scivocab_uncased (en-sci), layer 8, F. */
export const SCIBERT_RANDOM_F1 = 0.5322364;
export const PAPER_THRESHOLDS = { parasci: 0.7, definitions: 0.6 } as const;

const schema = z.object({
  pairs: z.string().min(1),
  model: z.string().min(1),
  seed: z.coerce.number().int(),
});

async function scores(encoder: Encoder, left: string[], right: string[]) {
  const t0 = performance.now();
  const f1: number[] = [];
  for (let i = 0; i < left.length; i += 256) {
    const l = left.slice(i, i + 256);
    const r = right.slice(i, i + 256);
    const tv = await encoder.encodeTokens([...l, ...r]);
    for (let k = 0; k < l.length; k++) f1.push(bertScore(tv, k, l.length + k).f1);
  }
  return { f1, ms: performance.now() - t0 };
}

const mean = (x: number[]) => x.reduce((s, v) => s + v, 0) / x.length;
const quantile = (x: number[], q: number) =>
  [...x].sort((u, v) => u - v)[Math.floor(q * (x.length - 1))] ?? 0;
const share = (x: number[], t: number) => x.filter((v) => v > t).length / x.length;
const summary = (x: number[]) => ({
  mean: mean(x),
  p01: quantile(x, 0.01),
  p05: quantile(x, 0.05),
  p50: quantile(x, 0.5),
  p95: quantile(x, 0.95),
});

export const bertscoreCalibrate = defineBenchmark({
  name: 'bertscore-calibrate',
  description: "ParaSCI's BERTScore thresholds carried over to our encoder by baseline rescaling",
  options: (cmd) =>
    cmd
      .option('--pairs <file>', 'positive pairs', '../shared/data/parasci/acl/val.src')
      .option('--model <name|dir>', 'encoder', 'all-minilm-l6-v2')
      .option('--seed <n>', 'seed of the random pairs', '7'),
  schema,
  async run(o) {
    const pairs = await readPairs(o.pairs);
    const a = pairs.map((p) => normalize(p.s1));
    const b = pairs.map((p) => normalize(p.s2));
    const rand = prng(o.seed);
    // A random other pair's target for each source (never its own).
    const other = a.map((_, i) => (i + 1 + Math.floor(rand() * (a.length - 1))) % a.length);
    const encoder = await Encoder.open(resolveModelDir(o.model), { spinning: false });
    const pos = await scores(encoder, a, b);
    const neg = await scores(
      encoder,
      a,
      other.map((j) => b[j] as string),
    );
    await encoder.close();
    const ours = mean(neg.f1);
    const thresholds = Object.fromEntries(
      Object.entries(PAPER_THRESHOLDS).map(([name, t]) => {
        const r = (t - SCIBERT_RANDOM_F1) / (1 - SCIBERT_RANDOM_F1);
        const mapped = ours + r * (1 - ours);
        const row = { paper: t, rescaled: r, ours: mapped };
        return [
          name,
          { ...row, keepsValPairs: share(pos.f1, mapped), keepsRandomPairs: share(neg.f1, mapped) },
        ];
      }),
    );
    const result = {
      pairs: o.pairs,
      model: o.model,
      n: pairs.length,
      scibertRandomF1: SCIBERT_RANDOM_F1,
      valPairs: summary(pos.f1),
      randomPairs: summary(neg.f1),
      thresholds,
      msPer1000Pairs: ((pos.ms + neg.ms) / (2 * pairs.length)) * 1000,
    };
    const rows = Object.entries(thresholds).map(
      ([name, t]) =>
        `| ${name} | ${t.paper} | ${t.ours.toFixed(3)} | ${(100 * t.keepsValPairs).toFixed(1)}% | ${(100 * t.keepsRandomPairs).toFixed(1)}% |`,
    );
    const markdown = [
      `BERTScore F1 with ${o.model} on ${pairs.length} pairs: val mean ${result.valPairs.mean.toFixed(3)}, random mean ${ours.toFixed(3)}; ${result.msPer1000Pairs.toFixed(0)} ms per 1,000 pairs`,
      '',
      '| preset | SciBERT threshold | ours | keeps val pairs | keeps random pairs |',
      '|---|---|---|---|---|',
      ...rows,
    ].join('\n');
    return { result, markdown };
  },
});

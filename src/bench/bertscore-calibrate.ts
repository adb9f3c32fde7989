/**
 * Calibrates the BERTScore thresholds of the ParaSCI presets for our encoder (docs/bertscore.md):
 * BERTScore F1 of ParaSCI val pairs and of as many random pairs (a source sentence with another pair's
 * target), then ParaSCI's SciBERT thresholds (0.7; 0.6 for definitions) carried over by bert_score's own
 * baseline rescaling: a threshold t sits at r = (t − b) / (1 − b) between the random-pair mean b and an
 * identical pair (1). SciBERT's b = 0.5322 (bert_score's en-sci baseline, layer 8, the default layer for
 * scibert-scivocab-uncased); ours is measured here, so t' = b' + r (1 − b'). Also the cost per 1,000 pairs.
 *
 *   node dist/bench/bertscore-calibrate.js --pairs ../shared/data/parasci/acl/val.src --json out.json
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { readPairs } from '../corpus/index.js';
import { bertScore, Encoder } from '../encode/index.js';
import { prng } from '../index/index.js';
import { resolveModelDir } from '../models/resolve.js';
import { normalize } from '../text/index.js';

/** bert_score's rescale baseline for allenai/scibert_scivocab_uncased (en-sci), layer 8, F. */
export const SCIBERT_RANDOM_F1 = 0.5322364;
export const PAPER_THRESHOLDS = { parasci: 0.7, definitions: 0.6 } as const;

const { values: o } = parseArgs({
  options: {
    pairs: { type: 'string', default: '../shared/data/parasci/acl/val.src' },
    model: { type: 'string', default: 'all-minilm-l6-v2' },
    seed: { type: 'string', default: '7' },
    json: { type: 'string' },
  },
});

const pairs = await readPairs(o.pairs as string);
const a = pairs.map((p) => normalize(p.s1));
const b = pairs.map((p) => normalize(p.s2));
const rand = prng(Number(o.seed));
// A random other pair's target for each source (never its own).
const other = a.map((_, i) => (i + 1 + Math.floor(rand() * (a.length - 1))) % a.length);
const encoder = await Encoder.open(resolveModelDir(o.model as string), { spinning: false });

async function scores(left: string[], right: string[]): Promise<{ f1: number[]; ms: number }> {
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

const pos = await scores(a, b);
const neg = await scores(
  a,
  other.map((j) => b[j] as string),
);
await encoder.close();

const mean = (x: number[]) => x.reduce((s, v) => s + v, 0) / x.length;
const quantile = (x: number[], q: number) => [...x].sort((u, v) => u - v)[Math.floor(q * (x.length - 1))]!;
const share = (x: number[], t: number) => x.filter((v) => v > t).length / x.length;
const ours = mean(neg.f1);
const thresholds = Object.fromEntries(
  Object.entries(PAPER_THRESHOLDS).map(([name, t]) => {
    const r = (t - SCIBERT_RANDOM_F1) / (1 - SCIBERT_RANDOM_F1);
    const mapped = ours + r * (1 - ours);
    return [
      name,
      {
        paper: t,
        rescaled: r,
        ours: mapped,
        keepsValPairs: share(pos.f1, mapped),
        keepsRandomPairs: share(neg.f1, mapped),
      },
    ];
  }),
);
const summary = (x: number[]) => ({
  mean: mean(x),
  p01: quantile(x, 0.01),
  p05: quantile(x, 0.05),
  p50: quantile(x, 0.5),
  p95: quantile(x, 0.95),
});
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
if (o.json) writeFileSync(o.json as string, `${JSON.stringify(result, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);

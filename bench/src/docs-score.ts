/**
 * The alignment's exact pair score, C++ (GramScorer) against the JavaScript reference in one invocation: the
 * docs-scale generator's N documents as TF-IDF rows, int8 mean embeddings beside them (random unit rows: the
 * score's cost does not depend on their values), each document scored against `width` candidates drawn at
 * random, the way the search and the neighbours' pass call it (one document, its candidates). Reports time a
 * pair for both, their ratio, and whether every score is the same float.
 *
 *   npm run -s lab -- docs-score --n 200000
 */
import { readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineBenchmark } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { prng } from '../../dist/index/index.js';
import { DocGrams } from '../../dist/jobs/align-grams.js';
import { Int8Rows } from '../../dist/jobs/align-hybrid.js';
import { type PairScore, pairScore, referenceScore } from '../../dist/jobs/align-score.js';
import { generate } from './docs-scale.js';

const schema = z.object({
  data: z.string().min(1),
  n: z.coerce.number().int().min(1_000),
  width: z.coerce.number().int().min(1).max(1_000),
  rows: z.coerce.number().int().min(100),
  rounds: z.coerce.number().int().min(1).max(20),
});
type Options = z.output<typeof schema>;

/** Seconds to score `rows` documents against their candidates, and the scores. */
function timed(
  score: PairScore,
  is: Int32Array,
  js: Int32Array,
  width: number,
): { seconds: number; out: Float32Array } {
  const out = new Float32Array(js.length).fill(-2);
  const t0 = process.hrtime.bigint();
  for (let r = 0; r < is.length; r++) {
    score(is[r] as number, js.subarray(r * width, (r + 1) * width), out.subarray(r * width, (r + 1) * width));
  }
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, out };
}

async function run(o: Options) {
  const loadBefore = loadavg();
  const path = join(tmpdir(), `docs-score-${process.pid}.txt`);
  const grams = new DocGrams();
  try {
    await generate({ data: o.data, n: o.n, perDoc: 3, plants: 'close' }, path);
    for (const text of readFileSync(path, 'utf8').split('\n', o.n)) grams.add(text);
  } finally {
    rmSync(path, { force: true });
  }
  await grams.finish();
  const rand = prng(7);
  const dim = 384;
  const m = Float32Array.from({ length: o.n * dim }, () => rand() - 0.5);
  for (let i = 0; i < o.n; i++) {
    const row = m.subarray(i * dim, (i + 1) * dim);
    const norm = Math.hypot(...row);
    for (let d = 0; d < dim; d++) row[d] = (row[d] as number) / norm;
  }
  const means = Int8Rows.from(m, dim);
  const is = Int32Array.from({ length: o.rows }, () => Math.floor(rand() * o.n));
  const js = Int32Array.from({ length: o.rows * o.width }, () => Math.floor(rand() * o.n));
  const results = [];
  for (const method of ['tfidf', 'hybrid'] as const) {
    const kept = method === 'hybrid' ? means : undefined;
    const scorers = {
      reference: referenceScore(grams, kept),
      native: pairScore({ grams: grams.share(), means: kept?.share() }),
    };
    const best = { reference: Number.POSITIVE_INFINITY, native: Number.POSITIVE_INFINITY };
    const outs: Partial<Record<keyof typeof scorers, Float32Array>> = {};
    // Alternated, best of each: neither gets a warmer cache or a quieter moment.
    for (let round = 0; round < o.rounds; round++) {
      for (const name of ['reference', 'native'] as const) {
        const { seconds, out } = timed(scorers[name], is, js, o.width);
        best[name] = Math.min(best[name], seconds);
        outs[name] = out;
      }
    }
    const a = outs.reference as Float32Array;
    const b = outs.native as Float32Array;
    const differ = a.reduce((c, v, x) => c + (Object.is(v, b[x]) ? 0 : 1), 0);
    const pairs = o.rows * o.width;
    results.push({
      method,
      pairs,
      usPerPair: { reference: (best.reference / pairs) * 1e6, native: (best.native / pairs) * 1e6 },
      speedup: best.reference / best.native,
      differ,
    });
  }
  const rows = results.map(
    (r) =>
      `| ${r.method} | ${r.usPerPair.reference.toFixed(2)} | ${r.usPerPair.native.toFixed(2)} | **${r.speedup.toFixed(2)}x** | ${r.differ} of ${r.pairs} |`,
  );
  const markdown =
    `${o.n} generated documents (docs-scale), ${o.rows} of them scored against ${o.width} random candidates each, ` +
    `best of ${o.rounds} alternated rounds.\n\n` +
    '| score | JavaScript us/pair | C++ us/pair | speed-up | scores that differ |\n|---|---:|---:|---:|---:|\n' +
    `${rows.join('\n')}\n`;
  return { result: { machine: machineInfo(loadBefore), options: o, results }, markdown };
}

export const docsScore = defineBenchmark({
  name: 'docs-score',
  description: "the alignment's exact pair score: C++ (GramScorer) against the JavaScript reference",
  options: (cmd) =>
    cmd
      .option('--data <dir>', 'the shared data', '../shared/data')
      .option('--n <n>', 'documents', '200000')
      .option('--width <n>', 'candidates a document', '40')
      .option('--rows <n>', 'documents scored a round', '20000')
      .option('--rounds <n>', 'alternated rounds, best of each kept', '3'),
  schema,
  run: async (o) => run(o),
});

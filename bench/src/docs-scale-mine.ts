/**
 * Mining within aligned documents against mining globally, at a corpus's scale (issue #53's second aim): the
 * docs-scale generator's N documents (planted document pairs holding `perDoc` paraphrase pairs each) as an
 * index of sentences, then
 *  - a global mining job (k nearest of every sentence in the whole index),
 *  - `docs align` over the index (partners 1, the band the data proposes) and a mining job within those
 *    document pairs,
 * each timed, and scored by the planted sentence pairs they find. The cost of mining within pairs is the
 * alignment's time plus its job's, against the global job's.
 *
 *   npm run -s lab -- docs-scale-mine --n 100000
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { type BenchOutput, defineBenchmark } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { splitSentences } from '../../dist/corpus/split.js';
import { readManifest } from '../../dist/index/index.js';
import { buildIndex } from '../../dist/indexer/build.js';
import { alignIndexDir } from '../../dist/jobs/align-index.js';
import { generate } from './docs-scale.js';
import { mine } from './scopes-mining.js';

const schema = z.object({
  data: z.string().min(1),
  n: z.coerce.number().int().min(100),
  perDoc: z.coerce.number().int().min(1),
  plants: z.enum(['close', 'auto']),
  k: z.coerce.number().int().min(1),
  minCosine: z.coerce.number().min(-1).max(1),
});
type Options = z.output<typeof schema>;

/** Each planted sentence's pieces (as the index splits them) name their pair and side. */
export function plantedIndex(pairs: ReadonlyArray<readonly [string, string]>) {
  const pieceOf = new Map<string, Array<{ pair: number; side: 0 | 1 }>>();
  pairs.forEach((p, pair) => {
    for (const side of [0, 1] as const) {
      for (const piece of splitSentences(p[side])) {
        const list = pieceOf.get(piece.text) ?? [];
        list.push({ pair, side });
        pieceOf.set(piece.text, list);
      }
    }
  });
  /** The planted pair a mined pair joins (one side's piece each), or -1. */
  return (a: string, b: string): number => {
    for (const x of pieceOf.get(a) ?? []) {
      for (const y of pieceOf.get(b) ?? []) if (x.pair === y.pair && x.side !== y.side) return x.pair;
    }
    return -1;
  };
}

async function run(o: Options): Promise<BenchOutput<Record<string, unknown>>> {
  const loadBefore = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'paramine-docs-scale-mine-'));
  try {
    const corpus = join(dir, 'docs.jsonl');
    const { planted, pairs: plantedPairs } = await generate(o, corpus, true);
    const index = join(dir, 'index');
    const b0 = performance.now();
    await buildIndex({ inputs: [corpus], out: index, documents: true, quiet: true });
    const buildSeconds = (performance.now() - b0) / 1000;
    const manifest = await readManifest(index);
    const a0 = performance.now();
    const { pairs: aligned, band } = await alignIndexDir(index, { partners: 1, autoBand: true });
    const alignSeconds = (performance.now() - a0) / 1000;
    writeFileSync(join(dir, 'aligned.jsonl'), aligned.map((p) => `${JSON.stringify(p)}\n`).join(''));
    const spec = { k: o.k, minCosine: o.minCosine, batchSize: 256 };
    const runs = await mine(
      index,
      { global: spec, 'within aligned document pairs': { ...spec, docPairs: { path: 'aligned.jsonl' } } },
      dir,
    );
    const plantedOf = plantedIndex(plantedPairs);
    const rows: Record<string, Record<string, number>> = {};
    for (const [name, r] of Object.entries(runs)) {
      const hits = r.pairs.map((p) => plantedOf(p.a.text, p.b.text)).filter((i) => i >= 0);
      const found = new Set(hits).size;
      const seconds = r.seconds + (name === 'global' ? 0 : alignSeconds);
      rows[name] = {
        seconds,
        jobSeconds: r.seconds,
        pairs: r.pairs.length,
        found,
        recall: found / plantedPairs.length,
        precision: r.pairs.length ? hits.length / r.pairs.length : 0,
      };
    }
    const global = rows.global as Record<string, number>;
    const within = rows['within aligned document pairs'] as Record<string, number>;
    const f = (x: number) => x.toFixed(3);
    const table = Object.entries(rows).map(
      ([name, m]) =>
        `| ${name} | ${(m.seconds as number).toFixed(1)}${name === 'global' ? '' : ` (align ${alignSeconds.toFixed(1)} + job ${(m.jobSeconds as number).toFixed(1)})`} | ${m.pairs} | ${m.found} | ${f(m.recall as number)} | ${f(m.precision as number)} |`,
    );
    const markdown =
      `${o.n} documents, ${manifest.ntotal} sentences (index built in ${(buildSeconds / 60).toFixed(1)} min), ` +
      `${planted} planted document pairs holding ${plantedPairs.length} planted paraphrase pairs; ` +
      `docs align (partners 1, the proposed band [${band.min}, ${band.max})): ${aligned.length} document pairs.\n\n` +
      `| mining (k ${o.k}, cosine >= ${o.minCosine}) | seconds | pairs | planted pairs found | recall | precision (pairs joining a planted pair's sides) |\n` +
      `|---|---:|---:|---:|---:|---:|\n${table.join('\n')}\n\n` +
      `Within the aligned pairs: recall ${f((within.recall as number) - (global.recall as number))} from the global job's, ` +
      `at ${f((within.seconds as number) / (global.seconds as number))} of its time (alignment included).\n`;
    return {
      result: {
        machine: machineInfo(loadBefore),
        options: o,
        documents: o.n,
        sentences: manifest.ntotal,
        factory: manifest.factory,
        planted: plantedPairs.length,
        buildSeconds,
        align: { seconds: alignSeconds, pairs: aligned.length, band: { min: band.min, max: band.max } },
        mining: rows,
      },
      markdown,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const docsScaleMine = defineBenchmark({
  name: 'docs-scale-mine',
  description: 'docs-scale documents as an index: mining within the aligned pairs against global mining',
  options: (cmd) =>
    cmd
      .option('--data <dir>', 'the shared data', '../shared/data')
      .option('--n <n>', 'documents', '100000')
      .option('--per-doc <n>', 'planted paraphrase pairs a planted document pair holds', '3')
      .option(
        '--plants <set>',
        'planted pairs: close (ParaSCI, MRPC) or auto (MultiPIT_Auto, lexically far)',
        'close',
      )
      .option('--k <n>', 'neighbours per sentence, both minings', '5')
      .option('--min-cosine <x>', 'both minings', '0.5'),
  schema,
  run: async (o) => run(o),
});

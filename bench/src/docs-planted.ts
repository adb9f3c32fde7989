/**
 * Documents with planted paraphrases (BENCHMARKS.md, "Documents"): a document set built from ../shared/data.
 * Paraphrase pairs (ParaSCI-ACL val, MultiPIT_Auto train positives) are planted across document pairs, one side
 * in each document of the pair (outlets `a` and `b`), among distractor sentences from the same sets (one
 * side of other pairs, so they have no planted partner), beside distractor documents with no pair at all.
 * Then, on one index built with `paramine index --documents`:
 *  - `docs align --differ outlet`: does each document find its planted partner? (precision / recall);
 *  - mining within the aligned document pairs, and within the true ones, against global mining at the same
 *    k: recall of the planted pairs, precision (planted pairs / pairs mined), time, and how many
 *    sentences each query could reach.
 *
 *   npm run lab -- docs-planted [--pairs-per-doc 5] [--doc-pairs 120] [--distractor-docs 240] [--k 5]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { type BenchOutput, defineBenchmark } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { readPairs } from '../../dist/corpus/index.js';
import { prng, readManifest } from '../../dist/index/index.js';
import { buildIndex } from '../../dist/indexer/build.js';
import { bandText } from '../../dist/jobs/align-band.js';
import { alignIndexDir } from '../../dist/jobs/align-index.js';
import { alignOptionsSchema } from '../../dist/jobs/align-options.js';
import { plantedIndex } from './docs-scale-mine.js';
import { mine } from './scopes-mining.js';

const schema = z.object({
  data: z.string().min(1),
  pairsPerDoc: z.coerce.number().int().min(1),
  distractorsPerDoc: z.coerce.number().int().min(0),
  docPairs: z.coerce.number().int().min(2),
  distractorDocs: z.coerce.number().int().min(0),
  k: z.coerce.number().int().min(1),
  partners: z.coerce.number().int().min(1),
  minCosine: z.coerce.number().min(-1).max(1),
  method: alignOptionsSchema.shape.method.unwrap(),
  dim: z.coerce.number().int().min(64),
});
type Options = z.output<typeof schema>;

interface Source {
  name: string;
  pairs: Array<[string, string]>;
  /** Sentences with no planted partner. */
  loose: string[];
}

function lines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
}

/** ParaSCI-ACL val and MultiPIT expert positives, shuffled; half of each set's pairs give loose sentences. */
async function sources(data: string, rand: () => number): Promise<Source[]> {
  const shuffle = <T>(xs: T[]) => {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [xs[i], xs[j]] = [xs[j] as T, xs[i] as T];
    }
    return xs;
  };
  const src = lines(join(data, 'parasci/acl/val.src'));
  const tgt = lines(join(data, 'parasci/acl/val.tgt'));
  const parasci = shuffle(
    src.map((s, i) => [s, tgt[i] ?? ''] as [string, string]).filter(([a, b]) => a !== b && b),
  );
  // MultiPIT expert repeats one source tweet across its pairs (178 distinct among 2,698 positives):
  // MultiPIT_Auto's positives give distinct pairs.
  const auto = shuffle(
    (await readPairs(join(data, 'multipit/auto/train.csv')))
      .filter((p) => p.s1 !== p.s2)
      .map((p) => [p.s1, p.s2] as [string, string]),
  );
  const multipit = auto.slice(0, 20_000);
  // Loose sentences: one side of the pairs not planted, then one side of each other pair (ParaSCI-ACL
  // train, the rest of MultiPIT_Auto train), so no loose sentence has its paraphrase in the set.
  const more = {
    parasci: shuffle(lines(join(data, 'parasci/acl/train.src'))),
    multipit: auto.slice(20_000).map(([a]) => a),
  };
  return (
    [
      ['parasci', parasci],
      ['multipit', multipit],
    ] as const
  ).map(([name, pairs]) => {
    const half = Math.floor(pairs.length / 2);
    const loose = [...pairs.slice(half).map(([a]) => a), ...more[name]];
    return { name, pairs: pairs.slice(0, half), loose: [...new Set(loose)] };
  });
}

interface DocSet {
  docs: Array<{ doc: string; outlet: 'a' | 'b'; set: string; text: string }>;
  planted: Array<{ a: string; b: string; docA: string; docB: string }>;
  truePairs: Array<{ a: string; b: string }>;
}

function build(o: Options, srcs: Source[], rand: () => number): DocSet {
  const out: DocSet = { docs: [], planted: [], truePairs: [] };
  // Every text once in the whole set (MultiPIT repeats sentences across pairs): the index keeps one copy.
  const used = new Set<string>();
  const fresh = (t: string) => !used.has(t.trim().toLowerCase());
  const use = (t: string) => used.add(t.trim().toLowerCase());
  function take<T>(xs: T[], n: number, what: string, texts: (x: T) => string[]): T[] {
    const picked: T[] = [];
    while (picked.length < n) {
      const x = xs.shift();
      if (x === undefined) throw new Error(`not enough ${what}`);
      const ts = texts(x);
      if (!ts.every(fresh) || new Set(ts.map((t) => t.trim().toLowerCase())).size < ts.length) continue;
      ts.forEach(use);
      picked.push(x);
    }
    return picked;
  }
  const loose = (s: Source, n: number) => take(s.loose, n, `${s.name} distractors`, (t) => [t]);
  const shuffled = (xs: string[]) =>
    xs
      .map((x) => [rand(), x] as const)
      .sort((p, q) => p[0] - q[0])
      .map((p) => p[1]);
  for (let i = 0; i < o.docPairs; i++) {
    const s = srcs[i % srcs.length] as Source;
    const pairs = take(s.pairs, o.pairsPerDoc, `${s.name} pairs`, (p) => [...p]);
    const [docA, docB] = [`${s.name}-${i}a`, `${s.name}-${i}b`];
    const side = (texts: string[]) => shuffled([...texts, ...loose(s, o.distractorsPerDoc)]).join('\n\n');
    out.docs.push({ doc: docA, outlet: 'a', set: s.name, text: side(pairs.map(([a]) => a)) });
    out.docs.push({ doc: docB, outlet: 'b', set: s.name, text: side(pairs.map(([, b]) => b)) });
    for (const [a, b] of pairs) out.planted.push({ a, b, docA, docB });
    out.truePairs.push({ a: docA, b: docB });
  }
  for (let i = 0; i < o.distractorDocs; i++) {
    const s = srcs[i % srcs.length] as Source;
    const texts = loose(s, o.pairsPerDoc + o.distractorsPerDoc);
    out.docs.push({
      doc: `${s.name}-x${i}`,
      outlet: i % 4 < 2 ? 'a' : 'b',
      set: s.name,
      text: texts.join('\n\n'),
    });
  }
  return out;
}

async function run(o: Options): Promise<BenchOutput<Record<string, unknown>>> {
  const loadBefore = loadavg();
  const rand = prng(11);
  const set = build(o, await sources(o.data, rand), rand);
  const dir = mkdtempSync(join(tmpdir(), 'paramine-docs-planted-'));
  try {
    const corpus = join(dir, 'docs.jsonl');
    writeFileSync(corpus, `${set.docs.map((d) => JSON.stringify(d)).join('\n')}\n`);
    const index = join(dir, 'index');
    const t0 = performance.now();
    // Each ParaSCI/MultiPIT line is one sentence: paragraphs keep them whole (no re-splitting differences).
    await buildIndex({ inputs: [corpus], out: index, documents: true, quiet: true, factory: 'Flat' });
    const buildSeconds = (performance.now() - t0) / 1000;
    const sentences = (await readManifest(index)).ntotal;
    const truth = new Set(set.truePairs.map((p) => `${p.a}~${p.b}`));
    const a0 = performance.now();
    const options = { method: o.method, partners: o.partners, max: 1.01, differ: ['outlet'], dim: o.dim };
    // The band the data proposes (no --min), then every --min on a grid: how close the proposal comes to the best.
    const { pairs, band } = await alignIndexDir(index, { ...options, autoBand: true });
    const scored = (ps: typeof pairs) => {
      const right = ps.filter((p) => truth.has(`${p.a}~${p.b}`) || truth.has(`${p.b}~${p.a}`)).length;
      const precision = ps.length ? right / ps.length : 0;
      const recall = right / truth.size;
      return {
        pairs: ps.length,
        precision,
        recall,
        f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0,
      };
    };
    const align = {
      seconds: (performance.now() - a0) / 1000,
      band: { min: band.min, from: band.from.min },
      ...scored(pairs),
    };
    const grid: Array<{ min: number } & ReturnType<typeof scored>> = [];
    for (let min = 0; min <= 0.9 + 1e-9; min += 0.02) {
      const at = Math.round(min * 100) / 100;
      grid.push({ min: at, ...scored((await alignIndexDir(index, { ...options, min: at })).pairs) });
    }
    const best = grid.reduce((b, g) => (g.f1 > b.f1 ? g : b));
    writeFileSync(join(dir, 'aligned.jsonl'), pairs.map((p) => `${JSON.stringify(p)}\n`).join(''));
    writeFileSync(join(dir, 'true.jsonl'), set.truePairs.map((p) => `${JSON.stringify(p)}\n`).join(''));
    const spec = { k: o.k, minCosine: o.minCosine, batchSize: 256 };
    const runs = await mine(
      index,
      {
        global: spec,
        'within aligned document pairs': { ...spec, docPairs: { path: 'aligned.jsonl' } },
        'within the true document pairs': { ...spec, docPairs: { path: 'true.jsonl' } },
      },
      dir,
    );
    // A planted side may be split in several sentences (tweets often are): each piece names its pair and side.
    const plantedOf = plantedIndex(set.planted.map((p) => [p.a, p.b] as const));
    const perDoc = o.pairsPerDoc + o.distractorsPerDoc;
    const mining: Record<string, unknown> = {};
    const rows = [
      `| mining (k ${o.k}, cosine ≥ ${o.minCosine}) | time (s) | sentences a query can reach | pairs | planted pairs found | recall of the ${set.planted.length} planted | precision (pairs joining a planted pair's sides) |`,
      '|---|---:|---:|---:|---:|---:|---:|',
    ];
    for (const [name, r] of Object.entries(runs)) {
      const hits = r.pairs.map((p) => plantedOf(p.a.text, p.b.text)).filter((i) => i >= 0);
      const found = new Set(hits).size;
      const reach = name === 'global' ? sentences - 1 : perDoc * (name.includes('true') ? 1 : o.partners);
      const m = {
        seconds: r.seconds,
        reach,
        pairs: r.pairs.length,
        found,
        recall: found / set.planted.length,
        precision: r.pairs.length ? hits.length / r.pairs.length : 0,
      };
      mining[name] = m;
      rows.push(
        `| ${name} | ${m.seconds.toFixed(2)} | ${reach} | ${m.pairs} | ${found} | ${m.recall.toFixed(3)} | ${m.precision.toFixed(3)} |`,
      );
    }
    const header =
      `${set.docs.length} documents (${o.docPairs} planted pairs of documents, ${o.distractorDocs} distractor documents), ` +
      `${sentences} sentences, ${set.planted.length} planted paraphrase pairs (${o.pairsPerDoc} a document pair among ` +
      `${o.distractorsPerDoc} distractors a document); built in ${buildSeconds.toFixed(1)} s.\n\n` +
      `| docs align (${o.method}, --differ outlet, partners ${o.partners}) | --min | time (s) | document pairs | precision | recall of the ${truth.size} planted document pairs | F1 |\n` +
      `|---|---:|---:|---:|---:|---:|---:|\n` +
      `| the band the data proposes | ${align.band.min} (${align.band.from}) | ${align.seconds.toFixed(2)} | ${align.pairs} | ${align.precision.toFixed(3)} | ${align.recall.toFixed(3)} | ${align.f1.toFixed(3)} |\n` +
      `| the best --min on a 0.02 grid | ${best.min} | | ${best.pairs} | ${best.precision.toFixed(3)} | ${best.recall.toFixed(3)} | ${best.f1.toFixed(3)} |\n\n` +
      `\`docs align --report\` on this set:\n\n\`\`\`\n${bandText(band)}\n\`\`\`\n\n`;
    return {
      result: {
        machine: machineInfo(loadBefore),
        options: o,
        documents: set.docs.length,
        sentences,
        planted: set.planted.length,
        buildSeconds,
        align,
        bestBand: best,
        grid,
        mining,
      },
      markdown: `${header}${rows.join('\n')}\n`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const docsPlanted = defineBenchmark({
  name: 'docs-planted',
  description:
    'documents with planted ParaSCI / MultiPIT paraphrases: docs align, then mining within pairs vs globally',
  options: (cmd) =>
    cmd
      .option('--data <dir>', 'the shared data', '../shared/data')
      .option('--pairs-per-doc <n>', 'planted paraphrase pairs a document pair holds', '5')
      .option('--distractors-per-doc <n>', 'distractor sentences a document holds', '10')
      .option('--doc-pairs <n>', 'document pairs with planted paraphrases', '120')
      .option('--distractor-docs <n>', 'documents with no partner', '240')
      .option('--k <n>', 'neighbours per sentence, every mining', '5')
      .option('--partners <m>', 'partner documents per document', '1')
      .option('--min-cosine <x>', 'every mining', '0.5')
      .option('--method <m>', 'docs align --method: tfidf, mean or hybrid', 'tfidf')
      .option('--dim <n>', 'tfidf: projection dimensions of the candidate search (docs align --dim)', '256'),
  schema,
  run: async (o) => run(o),
});

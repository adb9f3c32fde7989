/**
 * Documents (BENCHMARKS.md, "Documents"): the demo corpus as documents, each chapter of each translation one
 * document (verses as paragraphs), built with `paramine index --documents`; then
 *  - `docs align` (TF-IDF and mean embeddings): does each chapter pair with its twin in the other translation?
 *    Document-pair precision and recall;
 *  - mining within those pairs against global mining at the same k: verse twins found (a pair joining the
 *    same verse across the translations), precision, time and the candidates each query could see.
 *
 *   npm run lab -- docs [--k 5] [--partners 1]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { type BenchOutput, defineBenchmark } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { buildIndex } from '../../dist/indexer/build.js';
import { alignIndexDir } from '../../dist/jobs/align-index.js';
import { mine } from './scopes-mining.js';

const schema = z.object({
  corpus: z.string().min(1),
  k: z.coerce.number().int().min(1),
  partners: z.coerce.number().int().min(1),
  minCosine: z.coerce.number().min(-1).max(1),
  pairsFrom: z.string().min(1),
});

interface Verse {
  ref: string;
  start: number;
  end: number;
}

/** Chapters as documents: `VERSION Book C`, verses as paragraphs, with each verse's offsets. */
function chapters(corpus: string): { lines: string[]; verses: Map<string, Verse[]> } {
  const byDoc = new Map<string, Array<{ text: string; ref: string }>>();
  for (const line of readFileSync(corpus, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const r = JSON.parse(line) as { text: string; ref: string; version: string };
    const chapter = r.ref.replace(/:\d+$/, '');
    const doc = `${r.version} ${chapter}`;
    const list = byDoc.get(doc) ?? [];
    list.push({ text: r.text, ref: r.ref });
    byDoc.set(doc, list);
  }
  const lines: string[] = [];
  const verses = new Map<string, Verse[]>();
  for (const [doc, vs] of byDoc) {
    let at = 0;
    const spans: Verse[] = [];
    for (const v of vs) {
      spans.push({ ref: v.ref, start: at, end: at + v.text.length });
      at += v.text.length + 2;
    }
    verses.set(doc, spans);
    const [version, chapter] = [doc.replace(/ .*/, ''), doc.replace(/^\S+ /, '')];
    lines.push(JSON.stringify({ doc, version, chapter, text: vs.map((v) => v.text).join('\n\n') }));
  }
  return { lines, verses };
}

const twin = (doc: string) =>
  doc.startsWith('WEB ') ? doc.replace(/^WEB /, 'KJV ') : doc.replace(/^KJV /, 'WEB ');

async function run(o: z.output<typeof schema>): Promise<BenchOutput<Record<string, unknown>>> {
  const loadBefore = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'paramine-docs-bench-'));
  try {
    const { lines, verses } = chapters(o.corpus);
    const corpus = join(dir, 'chapters.jsonl');
    writeFileSync(corpus, `${lines.join('\n')}\n`);
    const index = join(dir, 'index');
    const t0 = performance.now();
    await buildIndex({ inputs: [corpus], out: index, documents: true, quiet: true, factory: 'Flat' });
    const buildSeconds = (performance.now() - t0) / 1000;

    // Document pairs, both ways of making document vectors.
    const docs = verses.size;
    const align: Record<string, { seconds: number; pairs: number; precision: number; recall: number }> = {};
    // As with alternative subtitles or two outlets: the partner comes from the other translation.
    for (const [name, method, differ] of [
      ['tfidf', 'tfidf', []],
      ['mean', 'mean', []],
      ['tfidf, differ version', 'tfidf', ['version']],
      ['mean, differ version', 'mean', ['version']],
    ] as const) {
      const a0 = performance.now();
      const { pairs } = await alignIndexDir(index, {
        method,
        partners: o.partners,
        min: 0.1,
        max: 1.01,
        differ: [...differ],
      });
      const right = pairs.filter((p) => twin(p.a) === p.b).length;
      align[name] = {
        seconds: (performance.now() - a0) / 1000,
        pairs: pairs.length,
        precision: pairs.length ? right / pairs.length : 0,
        recall: right / (docs / 2),
      };
      if (name === o.pairsFrom)
        writeFileSync(join(dir, 'doc-pairs.jsonl'), pairs.map((p) => `${JSON.stringify(p)}\n`).join(''));
    }

    // Mining: globally, and within the chosen document pairs, at the same k.
    const verseOf = (side: { meta?: Record<string, unknown> }) => {
      const doc = String(side.meta?.doc);
      const start = Number(side.meta?.start);
      return verses.get(doc)?.find((v) => start >= v.start && start < v.end + 2)?.ref;
    };
    const runs = await mine(
      index,
      {
        global: { k: o.k, minCosine: o.minCosine, batchSize: 256 },
        withinDocPairs: {
          k: o.k,
          minCosine: o.minCosine,
          batchSize: 256,
          docPairs: { path: 'doc-pairs.jsonl' },
        },
      },
      dir,
    );
    const goldVerses = new Set([...verses.values()].flat().map((v) => v.ref)).size;
    const mining: Record<string, unknown> = {};
    const rows = [
      '| mining (k ' +
        o.k +
        ') | time (s) | pairs | verse twins (pairs joining one verse across the translations) | precision | recall of the 1,446 verse twins |',
      '|---|---:|---:|---:|---:|---:|',
    ];
    for (const [name, r] of Object.entries(runs)) {
      const hits = r.pairs.filter((p) => {
        const [va, vb] = [verseOf(p.a), verseOf(p.b)];
        return va !== undefined && va === vb && String(p.a.meta?.doc) !== String(p.b.meta?.doc);
      });
      const found = new Set(hits.map((p) => verseOf(p.a))).size;
      const precision = r.pairs.length ? hits.length / r.pairs.length : 0;
      mining[name] = {
        seconds: r.seconds,
        pairs: r.pairs.length,
        twinPairs: hits.length,
        versesFound: found,
        precision,
        recall: found / goldVerses,
      };
      rows.push(
        `| ${name} | ${r.seconds.toFixed(2)} | ${r.pairs.length} | ${hits.length} | ${precision.toFixed(3)} | ${(found / goldVerses).toFixed(3)} |`,
      );
    }
    const alignRows = [
      `| docs align (partners ${o.partners}) | time (s) | document pairs | precision | recall of the ${docs / 2} chapter twins |`,
      '|---|---:|---:|---:|---:|',
      ...Object.entries(align).map(
        ([m, a]) =>
          `| ${m} | ${a.seconds.toFixed(2)} | ${a.pairs} | ${a.precision.toFixed(3)} | ${a.recall.toFixed(3)} |`,
      ),
    ];
    return {
      result: { machine: machineInfo(loadBefore), documents: docs, buildSeconds, k: o.k, align, mining },
      markdown: `${alignRows.join('\n')}\n\n${rows.join('\n')}\n`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const docsBench = defineBenchmark({
  name: 'docs',
  description:
    'documents: chapter twins by docs align, verse twins by mining within document pairs vs globally',
  options: (cmd) =>
    cmd
      .option(
        '--corpus <file>',
        'verses with ref and version (the demo corpus)',
        'examples/demo-corpus.jsonl',
      )
      .option('--k <n>', 'neighbours per sentence, both minings', '5')
      .option('--partners <m>', 'partner documents per document', '1')
      .option('--min-cosine <x>', 'both minings', '0.5')
      .option('--pairs-from <way>', 'the document pairs mining uses', 'mean, differ version'),
  schema,
  run: async (o) => run(o),
});

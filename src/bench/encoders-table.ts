/**
 * `paramine bench encoders`: the sentence encoders in one table (issue #28, BENCHMARKS.md's model table):
 * for each, one index over the validation pairs plus the distractor corpus (`bench distractors`, the 208k
 * training-side sentences of ../shared/data), then, for ParaSCI-ACL val and MultiPIT expert val, the rank
 * of every positive pair's s2 given its s1 by exact search (top-1/10/100, MRR), and the encoder's build
 * rate (sentences/s) from the same run. Exact search, so the figures are the encoder's, not the index's.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { type LabeledPair, readPairs } from '../corpus/index.js';
import { readManifest } from '../index/index.js';
import { SentenceStore, STORE_DIR } from '../store/index.js';
import { detectScheme } from '../text/labels.js';
import { defineBenchmark, type Log, list } from './harness.js';
import { type RetrievalResult, retrievalMetrics } from './metrics.js';
import { buildPairIndex, positiveQueries } from './retrieval-index.js';
import { rankThrough } from './retrieval-rank.js';

const DATA = '../shared/data';

const schema = z.object({
  encoders: z.array(z.string()).min(1),
  distractors: z.string(),
  sets: z.array(z.string()).min(1),
  depths: z.array(z.coerce.number().int().min(1)).min(1),
});
type Options = z.output<typeof schema>;

interface SetRow {
  set: string;
  queries: number;
  top: Record<string, number>;
  mrr: number;
}
interface EncoderRow {
  encoder: string;
  model: string;
  dim: number;
  sentences: number;
  buildSeconds: number;
  sentencesPerSecond: number;
  sets: SetRow[];
}

/** One encoder: its index over every set's pairs and the distractors, each set ranked exactly. */
async function measure(
  encoder: string,
  sets: ReadonlyArray<{ name: string; pairs: LabeledPair[] }>,
  o: Options,
  log: Log,
): Promise<EncoderRow> {
  const t0 = performance.now();
  const built = await buildPairIndex(
    sets.flatMap((s) => s.pairs),
    { distractors: [o.distractors], model: encoder, factory: 'Flat' },
    (line) => log(`${encoder}: ${line}`),
  );
  const buildSeconds = (performance.now() - t0) / 1000;
  const store = SentenceStore.open(join(built.dir, STORE_DIR));
  try {
    const manifest = await readManifest(built.dir);
    const corpusSize = store.count;
    const flat = await built.flat(manifest.dim, manifest.metric, corpusSize);
    const rows: SetRow[] = [];
    try {
      for (const s of sets) {
        const scheme = detectScheme(s.pairs.map((p) => p.label));
        const queries = positiveQueries(s.pairs, scheme, store, (line) => log(`${s.name}: ${line}`));
        const vectors = await built.vectors(
          queries.map((x) => x.q),
          manifest.dim,
        );
        const input = { queries, vectors, dim: manifest.dim, scheme };
        const deepest = Math.max(...o.depths);
        const r: RetrievalResult = retrievalMetrics(
          await rankThrough(flat, input, { deepest, corpusSize }),
          o.depths,
        );
        rows.push({ set: s.name, queries: queries.length, top: r.top, mrr: r.mrr });
      }
    } finally {
      await flat.close();
    }
    return {
      encoder,
      model: manifest.model.id,
      dim: manifest.dim,
      sentences: corpusSize,
      buildSeconds,
      sentencesPerSecond: corpusSize / buildSeconds,
      sets: rows,
    };
  } finally {
    await store.close();
    built.remove();
  }
}

function markdown(rows: readonly EncoderRow[], depths: readonly number[]): string {
  const sets = rows[0]?.sets.map((s) => s.set) ?? [];
  const pct = (x: number | undefined) => (x === undefined ? '—' : (100 * x).toFixed(1));
  const head = sets.map((s) => `${s}: ${depths.map((d) => `top-${d}`).join(' / ')}, MRR`);
  return [
    `| encoder | dim | ${head.join(' | ')} | sentences/s (build) |`,
    `|---|---:|${sets.map(() => '---:').join('|')}|---:|`,
    ...rows.map(
      (r) =>
        `| \`${r.encoder}\` | ${r.dim} | ${r.sets
          .map((s) => `${depths.map((d) => pct(s.top[String(d)])).join(' / ')}, ${s.mrr.toFixed(3)}`)
          .join(' | ')} | ${r.sentencesPerSecond.toFixed(0)} |`,
    ),
    '',
    `${rows[0]?.sentences ?? 0} sentences indexed per encoder (the sets' pairs and the distractors); exact search.`,
    '',
  ].join('\n');
}

export const encoders = defineBenchmark({
  name: 'encoders',
  description:
    'sentence encoders in one table: top-N and MRR on ParaSCI-ACL val and MultiPIT expert val among the distractors, sentences/s',
  options: (cmd) =>
    cmd
      .option('--encoders <names>', 'encoders (catalog names or model directories)', list, [
        'all-minilm-l6-v2',
        'bge-small-en-v15',
        'all-mpnet-base-v2',
        'paramine-minilm-paraphrase-ft-q',
      ])
      .option('--distractors <file>', 'the distractor corpus (paramine bench distractors)', 'distractors.txt')
      .option('--sets <files>', 'validation pair files', list, [
        join(DATA, 'parasci/acl/val.src'),
        join(DATA, 'multipit/expert/val.csv'),
      ])
      .option('--depths <list>', 'top-N depths', list, ['1', '10', '100']),
  schema,
  async run(o, log) {
    const sets = await Promise.all(o.sets.map(async (f) => ({ name: f, pairs: await readPairs(f) })));
    const rows: EncoderRow[] = [];
    for (const encoder of o.encoders) {
      rows.push(await measure(encoder, sets, o, log));
      log(`${encoder}: ${rows.at(-1)?.sentencesPerSecond.toFixed(0)} sentences/s`);
    }
    return {
      result: { benchmark: 'encoders', distractors: o.distractors, depths: o.depths, rows },
      markdown: markdown(rows, o.depths),
    };
  },
});

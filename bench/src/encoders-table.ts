/**
 * `paramine bench encoders`: the sentence encoders in one table (issue #28, BENCHMARKS.md's model table):
 * for each, one index over the validation pairs plus the distractor corpus (`bench distractors`, the 208k
 * training-side sentences of ../shared/data), then, for ParaSCI-ACL val and MultiPIT expert val, the rank
 * of every positive pair's s2 given its s1 by exact search (top-1/10/100, MRR), and the encoder's build
 * rate (sentences/s) from the same run. Exact search, so the figures are the encoder's, not the index's.
 * `--save DIR` keeps each encoder's row as it finishes and reuses it on the next run (a base-size encoder
 * over 208k sentences takes over an hour on 2 cores: the table fills in over several sessions), and
 * `--work DIR` builds each index under DIR, where a run cut short resumes its build (the row's rate then
 * comes from the indexer's embedding, training and filling time summed over the runs).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { defineBenchmark, type Log, list } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { retrievalMetrics } from '../../dist/bench/metrics.js';
import { buildPairIndex, type PairIndex, positiveQueries } from '../../dist/bench/retrieval-index.js';
import { rankThrough } from '../../dist/bench/retrieval-rank.js';
import { type LabeledPair, readPairs } from '../../dist/corpus/index.js';
import { readManifest, ShardedIndex } from '../../dist/index/index.js';
import { resolveModelDir } from '../../dist/models/resolve.js';
import { SentenceStore, STORE_DIR } from '../../dist/store/index.js';
import { detectScheme } from '../../dist/text/labels.js';
import { trainedBy } from './model-card.js';

const DATA = '../shared/data';
const DEFAULTS = {
  encoders: ['all-minilm-l6-v2', 'bge-small-en-v15', 'all-mpnet-base-v2', 'paramine-minilm-paraphrase-ft-q'],
  distractors: 'distractors.txt',
  sets: [join(DATA, 'parasci/acl/val.src'), join(DATA, 'multipit/expert/val.csv')],
  depths: [1, 10, 100],
};

export const encodersSchema = z.object({
  encoders: z.array(z.string()).min(1).default(DEFAULTS.encoders),
  distractors: z.string().default(DEFAULTS.distractors),
  sets: z.array(z.string()).min(1).default(DEFAULTS.sets),
  depths: z.array(z.coerce.number().int().min(1)).min(1).default(DEFAULTS.depths),
  save: z.string().optional(),
  work: z.string().optional(),
});
type Options = z.output<typeof encodersSchema>;

export interface SetRow {
  set: string;
  queries: number;
  top: Record<string, number>;
  mrr: number;
}
export interface EncoderRow {
  encoder: string;
  model: string;
  dim: number;
  sentences: number;
  buildSeconds: number;
  sentencesPerSecond: number;
  /** The build was resumed: buildSeconds is the indexer's work summed over its runs, not one wall time. */
  resumed?: boolean;
  sets: SetRow[];
  /** The training run that produced it (its card), or the package it was fetched from. */
  from: string;
  /** When and on what it was measured (rows kept by --save come from earlier runs). */
  measured: { at: string; machine: ReturnType<typeof machineInfo> };
}

/** One encoder: its index over every set's pairs and the distractors, each set ranked exactly. */
async function measure(
  encoder: string,
  sets: ReadonlyArray<{ name: string; pairs: LabeledPair[] }>,
  o: Options,
  log: Log,
): Promise<EncoderRow> {
  const loadBefore = loadavg();
  const t0 = performance.now();
  const built = await buildPairIndex(
    sets.flatMap((s) => s.pairs),
    {
      distractors: [o.distractors],
      model: encoder,
      factory: 'Flat',
      work: o.work === undefined ? undefined : join(o.work, fileName(encoder)),
    },
    (line) => log(`${encoder}: ${line}`),
  );
  const { summary } = built;
  const buildSeconds = summary.resumed
    ? (summary.embedMs + summary.trainMs + summary.fillMs) / 1000
    : (performance.now() - t0) / 1000;
  const store = SentenceStore.open(join(built.dir, STORE_DIR));
  let row: EncoderRow;
  try {
    const manifest = await readManifest(built.dir);
    row = {
      encoder,
      model: manifest.model.id,
      dim: manifest.dim,
      sentences: store.count,
      buildSeconds,
      sentencesPerSecond: store.count / buildSeconds,
      ...(summary.resumed ? { resumed: true } : {}),
      sets: await rankSets(built, store, manifest.dim, sets, o, log),
      from: origin(encoder),
      measured: { at: new Date().toISOString(), machine: machineInfo(loadBefore) },
    };
  } catch (e) {
    built.abandon();
    throw e;
  } finally {
    await store.close();
  }
  built.remove();
  return row;
}

/** Each set's positive pairs ranked by exact search (the index was built as Flat: it is the exact search). */
async function rankSets(
  built: PairIndex,
  store: SentenceStore,
  dim: number,
  sets: ReadonlyArray<{ name: string; pairs: LabeledPair[] }>,
  o: Options,
  log: Log,
): Promise<SetRow[]> {
  const flat = await ShardedIndex.open(built.dir);
  const rows: SetRow[] = [];
  try {
    for (const s of sets) {
      const scheme = detectScheme(s.pairs.map((p) => p.label));
      const queries = positiveQueries(s.pairs, scheme, store, (line) => log(`${s.name}: ${line}`));
      const vectors = await built.vectors(
        queries.map((x) => x.q),
        dim,
      );
      const input = { queries, vectors, dim, scheme };
      const r = retrievalMetrics(
        await rankThrough(flat, input, { deepest: Math.max(...o.depths), corpusSize: store.count }),
        o.depths,
      );
      rows.push({ set: s.name, queries: queries.length, top: r.top, mrr: r.mrr });
    }
  } finally {
    await flat.close();
  }
  return rows;
}

/** A catalog name or a model directory as one file or directory name. */
const fileName = (encoder: string) => encoder.replace(/[^\w.-]+/g, '_');

/** The run that produced a fine-tuned encoder (its card), else the catalog package it is fetched from. */
function origin(encoder: string): string {
  const trained = trainedBy(resolveModelDir(encoder));
  return trained === '—' ? `pretrained, \`paramine models fetch ${encoder}\`` : `trained: ${trained}`;
}

/** The day, the CPU and the load before the row's run (rows of a --save folder come from several runs). */
const measuredOn = (r: EncoderRow) =>
  `${r.measured.at.slice(0, 10)}, ${r.measured.machine.cpus} × ${r.measured.machine.cpuModel}, load ${r.measured.machine.loadavgBefore[0]?.toFixed(1)}${r.resumed ? ', build resumed' : ''}`;

function markdown(rows: readonly EncoderRow[], depths: readonly number[]): string {
  const sets = rows[0]?.sets.map((s) => s.set) ?? [];
  const pct = (x: number | undefined) => (x === undefined ? '—' : (100 * x).toFixed(1));
  const head = sets.map((s) => `${s}: ${depths.map((d) => `top-${d}`).join(' / ')}, MRR`);
  return [
    `| encoder | dim | ${head.join(' | ')} | sentences/s (build) | measured | model from |`,
    `|---|---:|${sets.map(() => '---:').join('|')}|---:|---|---|`,
    ...rows.map(
      (r) =>
        `| \`${r.encoder}\` | ${r.dim} | ${r.sets
          .map((s) => `${depths.map((d) => pct(s.top[String(d)])).join(' / ')}, ${s.mrr.toFixed(3)}`)
          .join(' | ')} | ${r.sentencesPerSecond.toFixed(0)} | ${measuredOn(r)} | ${r.from} |`,
    ),
    '',
    `${rows[0]?.sentences ?? 0} sentences indexed per encoder (the sets' pairs and the distractors); exact search.`,
    '',
  ].join('\n');
}

export const ENCODERS_HELP = `encoders, catalog names or model directories (${DEFAULTS.encoders.join(', ')})`;
export const DISTRACTORS_HELP = `the distractor corpus (paramine bench distractors; ${DEFAULTS.distractors})`;
export const SAVE_HELP = "keep each encoder's row there as it finishes; rows already there are reused";
export const WORK_HELP =
  "build each encoder's index under DIR/<encoder>, where a run cut short resumes it (removed once its row is measured)";

export const encoders = defineBenchmark({
  name: 'encoders',
  description:
    'sentence encoders in one table: top-N and MRR on ParaSCI-ACL val and MultiPIT expert val among the distractors, sentences/s',
  options: (cmd) =>
    cmd
      .option('--encoders <names>', ENCODERS_HELP, list)
      .option('--distractors <file>', DISTRACTORS_HELP)
      .option('--sets <files>', `validation pair files (${DEFAULTS.sets.join(', ')})`, list)
      .option('--depths <list>', `top-N depths (${DEFAULTS.depths.join(', ')})`, list)
      .option('--save <dir>', SAVE_HELP)
      .option('--work <dir>', WORK_HELP),
  schema: encodersSchema,
  run: async (o, log) => encoderTable(o, log),
});

/** The table: each encoder measured (or its row taken from --save), in the order given. */
export async function encoderTable(o: Options, log: Log) {
  const sets = await Promise.all(o.sets.map(async (f) => ({ name: f, pairs: await readPairs(f) })));
  const rows: EncoderRow[] = [];
  for (const encoder of o.encoders) {
    const saved = o.save === undefined ? undefined : join(o.save, `${fileName(encoder)}.json`);
    if (saved !== undefined && existsSync(saved)) {
      rows.push(JSON.parse(readFileSync(saved, 'utf8')) as EncoderRow);
      log(`${encoder}: the row measured ${rows.at(-1)?.measured.at} (${saved})`);
      continue;
    }
    const row = await measure(encoder, sets, o, log);
    rows.push(row);
    log(`${encoder}: ${row.sentencesPerSecond.toFixed(0)} sentences/s`);
    if (saved !== undefined) {
      mkdirSync(dirname(saved), { recursive: true });
      writeFileSync(saved, `${JSON.stringify(row, null, 2)}\n`);
    }
  }
  return {
    result: { benchmark: 'encoders', distractors: o.distractors, depths: o.depths, rows },
    markdown: markdown(rows, o.depths),
  };
}

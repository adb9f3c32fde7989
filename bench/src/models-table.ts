/**
 * `paramine bench models`: one table of the binary cross-encoders, quality and speed side by side, from
 * one command (BENCHMARKS.md's model table): each model at the label cut its config writes, on MultiPIT
 * expert val and the MRPC held-out rows, with pairs/s measured in the same invocation and where the card
 * says it was trained; with --encoders, the sentence encoders' table (bench encoders) under it, so one
 * command gives both.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { classifyBenchmark } from '../../dist/bench/classify.js';
import { defineBenchmark, list } from '../../dist/bench/harness.js';
import { heldoutLines } from '../../dist/corpus/index.js';
import {
  DISTRACTORS_HELP,
  ENCODERS_HELP,
  encodersSchema,
  encoderTable,
  SAVE_HELP,
  WORK_HELP,
} from './encoders-table.js';
import { readJsonOr, trainedBy } from './model-card.js';

const DATA = '../shared/data';

const configSchema = z.looseObject({
  paramine: z.looseObject({ label_scheme: z.string().optional() }).optional(),
});

/** Every binary cross-encoder under models/ (a config.json with paramine.label_scheme binary and a graph). */
function binaryCrossEncoders(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => existsSync(join(dir, name, 'model.onnx')))
    .filter(
      (name) =>
        configSchema.parse(readJsonOr(join(dir, name, 'config.json'))).paramine?.label_scheme === 'binary',
    )
    .sort();
}

const schema = z.object({
  rerankers: z.array(z.string()).optional(),
  models: z.string(),
  multipit: z.string(),
  mrpc: z.string(),
  heldout: z.string(),
  /** With encoders, the sentence encoders' table too (bench encoders), under the cross-encoders'. */
  encoders: z.array(z.string()).min(1).optional(),
  distractors: z.string().optional(),
  save: z.string().optional(),
  work: z.string().optional(),
});

export const models = defineBenchmark({
  name: 'models',
  description:
    'every binary cross-encoder in one table: MultiPIT expert val F1 / P / R, MRPC held-out accuracy, pairs/s',
  options: (cmd) =>
    cmd
      .option('--rerankers <names>', 'cross-encoders (default: every binary one under --models)', list)
      .option('--models <dir>', 'where the models are', 'models')
      .option('--multipit <file>', 'MultiPIT expert val', join(DATA, 'multipit/expert/val.csv'))
      .option('--mrpc <file>', 'MRPC train (its held-out rows are scored)', join(DATA, 'mrpc/train.tsv'))
      .option(
        '--heldout <json>',
        'the MRPC held-out rows',
        'models/paramine-paraphrase-minilm/mrpc-heldout.json',
      )
      .option('--encoders <names>', `also the sentence encoders' table: ${ENCODERS_HELP}`, list)
      .option('--distractors <file>', `with --encoders: ${DISTRACTORS_HELP}`)
      .option('--save <dir>', `with --encoders: ${SAVE_HELP}`)
      .option('--work <dir>', `with --encoders: ${WORK_HELP}`),
  schema,
  async run(o, log) {
    const names = o.rerankers ?? binaryCrossEncoders(o.models);
    const lines = heldoutLines(o.heldout);
    const rows = [];
    for (const name of names) {
      log(`${name}: MultiPIT expert val, MRPC held-out`);
      const dir = existsSync(join(o.models, name)) ? join(o.models, name) : name;
      const mp = (await classifyBenchmark({ pairs: o.multipit, reranker: dir })).result;
      const mrpc = (await classifyBenchmark({ pairs: o.mrpc, reranker: dir, lines })).result;
      rows.push({
        model: name,
        cut: mp.label_cut,
        calibrated: mp.label_calibration !== null,
        multipit: { ...mp.binary, n: mp.n, pairsPerSecond: mp.pairs_per_s, ece: mp.calibration?.ece },
        mrpc: {
          accuracy: mrpc.accuracy,
          n: mrpc.n,
          pairsPerSecond: mrpc.pairs_per_s,
          ece: mrpc.calibration?.ece,
        },
        trainedBy: trainedBy(dir),
      });
    }
    const pct = (x: number | undefined) => (x === undefined ? '—' : (100 * x).toFixed(1));
    const ece = (x: number | undefined) => (x === undefined ? '—' : x.toFixed(3));
    const markdown = [
      '| cross-encoder | label cut | MultiPIT expert val F1 (P / R) | MRPC held-out acc | ECE of P(paraphrase) MultiPIT / MRPC | pairs/s MultiPIT / MRPC | trained |',
      '|---|---:|---:|---:|---:|---:|---|',
      ...rows.map(
        (r) =>
          `| \`${r.model}\` | ${r.cut ?? '0.5'}${r.calibrated ? ' (calibrated P)' : ''} | ${pct(r.multipit.f1)} (${pct(r.multipit.precision)} / ${pct(r.multipit.recall)}) | ` +
          `${pct(r.mrpc.accuracy)} | ${ece(r.multipit.ece)} / ${ece(r.mrpc.ece)} | ` +
          `${r.multipit.pairsPerSecond.toFixed(0)} / ${r.mrpc.pairsPerSecond.toFixed(0)} | ${r.trainedBy} |`,
      ),
      '',
    ].join('\n');
    const { encoders, distractors, save, work } = o;
    const e =
      encoders === undefined
        ? undefined
        : await encoderTable(encodersSchema.parse({ encoders, distractors, save, work }), log);
    return {
      result: { benchmark: 'models', rows, encoders: e?.result },
      markdown: e === undefined ? markdown : `${markdown}\n${e.markdown}`,
    };
  },
});

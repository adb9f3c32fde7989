/** `paramine bench retrieval|classify`: the papers' measurements on any labeled pair file. */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { DEFAULT_ENCODER } from '../models/catalog.js';
import { DEFAULT_RERANKER } from '../service/index.js';
import { parseInput } from '../validate.js';
import { classifyBenchmark } from './classify.js';
import { classificationMarkdown, retrievalMarkdown, retrievalSvg } from './report.js';
import { retrievalBenchmark } from './retrieval.js';
import { runSpeed, SPEED_PARTS } from './speed.js';

const list = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const retrievalSchema = z.object({
  pairs: z.string(),
  distractors: z.array(z.string()).default([]),
  model: z.string(),
  reranker: z.string().optional(),
  rerankDepth: z.coerce.number().int().min(1).max(1000).default(20),
  depths: z.array(z.coerce.number().int().min(1)).min(1),
  exact: z.boolean().default(false),
  factory: z.string(),
  nprobe: z.coerce.number().int().min(1).optional(),
  positive: z.array(z.string()).optional(),
  json: z.string().optional(),
  md: z.string().optional(),
  svg: z.string().optional(),
});

function emit(o: { json?: string | undefined; md?: string | undefined }, json: unknown, md: string): void {
  if (o.json) writeFileSync(o.json, `${JSON.stringify(json, null, 2)}\n`);
  if (o.md) writeFileSync(o.md, md);
  process.stdout.write(md);
}

export function register(program: Command): void {
  const bench = program
    .command('bench')
    .description('retrieval and classification benchmarks (see BENCHMARKS.md)');
  bench
    .command('retrieval')
    .description("top-N retrieval of each positive pair's s2 given s1, among all sentences plus distractors")
    .requiredOption(
      '--pairs <file>',
      'labeled pairs (MRPC TSV, MultiPIT CSV, Turku JSON, ParaSCI .src, TSV/JSONL)',
    )
    .option('--distractors <files...>', 'extra corpus files hiding the pairs')
    .option('--model <name|dir>', 'encoder', DEFAULT_ENCODER)
    .option('--reranker <name|dir>', 'also report top-1/10 after reranking the first K')
    .option('--rerank-depth <k>', 'candidates reranked', '20')
    .option('--depths <list>', 'top-N depths', list, ['1', '10', '100', '1000'])
    .option('--exact', 'also through exact (flat) search', false)
    .option('--factory <str>', 'FAISS factory string or auto', 'auto')
    .option('--nprobe <n>', 'IVF lists visited')
    .option('--positive <labels>', 'labels counted as positive', list)
    .option('--json <file>', 'write JSON results')
    .option('--md <file>', 'write the Markdown table')
    .option('--svg <file>', 'write the figure')
    .action(async (raw: Record<string, unknown>) => {
      const o = parseInput(retrievalSchema, raw, 'options');
      const run = await retrievalBenchmark({ ...o, log: (l) => process.stderr.write(`${l}\n`) });
      const runs = [
        { name: 'ANN', result: run.ann },
        ...(run.exact ? [{ name: 'exact', result: run.exact }] : []),
        ...(run.reranked ? [{ name: `ANN + rerank@${o.rerankDepth}`, result: run.reranked }] : []),
      ];
      const md = retrievalMarkdown(runs, {
        title: `Retrieval: ${o.pairs} (${run.result.pairs} pairs among ${run.result.corpus_size} sentences, ${run.result.index.factory})`,
      });
      if (o.svg)
        writeFileSync(
          o.svg,
          retrievalSvg(run.ann, {
            ...(run.exact ? { exact: run.exact } : {}),
            title: `Top-N retrieval: ${o.pairs}`,
          }),
        );
      emit(o, run.result, md);
    });

  const classifySchema = z.object({
    pairs: z.string(),
    reranker: z.string(),
    positive: z.array(z.string()).optional(),
    heldout: z.string().optional(),
    json: z.string().optional(),
    md: z.string().optional(),
  });
  bench
    .command('classify')
    .description('per-label precision / recall / F1 of the cross-encoder on labeled pairs')
    .requiredOption('--pairs <file>', 'labeled pairs')
    .option('--reranker <name|dir>', 'cross-encoder', DEFAULT_RERANKER)
    .option('--positive <labels>', 'labels counted as positive', list)
    .option(
      '--heldout <json>',
      'only the pairs at the 1-based file lines this JSON file lists ({"lines": [...]})',
    )
    .option('--json <file>', 'write JSON results')
    .option('--md <file>', 'write the Markdown table')
    .action(async (raw: Record<string, unknown>) => {
      const o = parseInput(classifySchema, raw, 'options');
      const lines = o.heldout
        ? new Set(
            parseInput(
              z.looseObject({ lines: z.array(z.number().int()) }),
              JSON.parse(readFileSync(o.heldout, 'utf8')),
              'heldout',
            ).lines,
          )
        : undefined;
      const { result } = await classifyBenchmark({ ...o, lines });
      emit(
        o,
        result,
        classificationMarkdown(result, { title: `Classification: ${o.pairs} (${result.model})` }),
      );
    });

  const speedSchema = z.object({
    out: z.string().min(1),
    only: z
      .array(z.enum(SPEED_PARTS))
      .min(1)
      .default([...SPEED_PARTS]),
    quick: z.boolean().default(false),
  });
  bench
    .command('speed')
    .description('encoder, index, build, HTTP and mining speed benchmarks, gathered into one report')
    .option('--out <dir>', 'where the report (speed.md, speed.json) and each part’s JSON go', 'bench-results')
    .option('--only <parts>', `some of ${SPEED_PARTS.join(',')}`, list)
    .option('--quick', 'small sizes: a smoke run, not numbers to publish', false)
    .action((raw: Record<string, unknown>) => {
      const o = parseInput(speedSchema, raw, 'options');
      const { failed } = runSpeed({ out: o.out, parts: o.only, quick: o.quick });
      if (failed.length > 0) process.exitCode = 1;
    });
}

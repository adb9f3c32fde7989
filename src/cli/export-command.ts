/** `paramine export`: a dataset (JSONL and/or Parquet, split) from a mining job's pairs. */
import type { Command } from 'commander';
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import { type ExportSummary, exportDataset } from '../jobs/export.js';
import { parseSplitPlan } from '../jobs/splits.js';
import { MAX_CONTEXT } from '../store/index.js';
import { parseInput } from '../validate.js';

const flagsSchema = z
  .object({
    pairs: z.string().min(1).optional(),
    state: z.string().min(1).optional(),
    job: z.string().min(1).optional(),
    out: z.string().min(1),
    format: z.array(z.enum(['jsonl', 'parquet'])).min(1),
    split: z.string().min(1),
    groupBy: z.string().min(1).optional(),
    orderBy: z.string().min(1).optional(),
    excludeGroupsOf: z.string().min(1).optional(),
    excludeKey: z.string().min(1).optional(),
    label: z.string().min(1).optional(),
    labels: z.array(z.string().min(1)).min(1).optional(),
    minProbability: z.number().min(0).max(1).optional(),
    strict: z.boolean().default(false),
    seed: z.number().int(),
    context: z.number().int().min(0).max(MAX_CONTEXT),
    index: z.string().min(1).optional(),
  })
  .refine((f) => (f.pairs === undefined) !== (f.state === undefined), {
    message: 'give --pairs FILE or --state DIR (one of them)',
    path: ['pairs'],
  });

export function register(program: Command): void {
  program
    .command('export')
    .description("write a dataset from a mining job's pairs: JSONL/Parquet splits, grouped or by time")
    .option('--pairs <file>', 'the NDJSON pairs `paramine mine` wrote (or GET /v1/jobs/:id/results)')
    .option('--state <dir>', "a job state directory (`paramine mine --state`, the service's jobs directory)")
    .option('--job <id>', 'the job in --state (default: the latest)')
    .requiredOption('--out <dir>', 'output directory: SPLIT.jsonl, SPLIT.parquet')
    .option('--format <formats...>', 'jsonl, parquet or both', ['jsonl', 'parquet'])
    .option('--split <shares>', 'split names and shares, e.g. train=0.8,val=0.1,test=0.1', '0.8,0.1,0.1')
    .option('--group-by <key>', 'metadata key whose groups never straddle two splits (e.g. paper, trend)')
    .option('--order-by <key>', 'split by time: earlier pairs first (ISO dates or numbers)')
    .option(
      '--exclude-groups-of <file>',
      'drop pairs sharing a group with this test set (pairs JSONL or values)',
    )
    .option('--exclude-key <key>', 'the key of --exclude-groups-of (default: --group-by)')
    .option('--label <label>', 'label of every row when the job did not rerank (e.g. paraphrase)')
    .option('--labels <labels...>', 'keep only pairs with these labels (e.g. paraphrase)')
    .option('--min-probability <p>', "keep only pairs whose label's probability is at least p", (v) =>
      Number(v),
    )
    .option('--strict', 'refuse (exit 1) when a split comes out empty, instead of warning')
    .option('--seed <n>', 'seed of the grouped shuffle', (v) => Number(v), 1)
    .option(
      '--context <n>',
      "each side's N sentences before and after in its document (s1_context, s2_context; needs --index)",
      (v) => Number(v),
      0,
    )
    .option(
      '--index <dir>',
      'the index the pairs were mined from (for --context; pairs of sentences deleted from it since are left out)',
    )
    .action(async (raw: Record<string, unknown>) => {
      const o = parseInput(flagsSchema, raw, 'flags');
      const split = parseSplitPlan(o.split);
      if (typeof split === 'string')
        throw new ParamineError('BAD_INPUT', `--split: ${split}`, { field: 'split' });
      const summary = await exportDataset({
        source: o.pairs !== undefined ? { pairs: o.pairs } : { state: o.state as string, job: o.job },
        out: o.out,
        formats: o.format,
        split,
        groupBy: o.groupBy,
        orderBy: o.orderBy,
        excludeGroupsOf: o.excludeGroupsOf,
        excludeKey: o.excludeKey,
        label: o.label,
        keepLabels: o.labels,
        minProbability: o.minProbability,
        seed: o.seed,
        context: o.context,
        index: o.index,
      });
      const lines = [
        `${summary.pairs} pairs exported${summary.filtered > 0 ? `, ${summary.filtered} left out by --labels / --min-probability` : ''}${summary.excluded > 0 ? `, ${summary.excluded} dropped for sharing a group with the test set` : ''}` +
          `${summary.deleted > 0 ? `, ${summary.deleted} left out because a sentence was deleted from the index` : ''}`,
        ...summary.splits.map(
          (s) =>
            `  ${s.name}: ${s.pairs} pairs${o.groupBy === undefined ? '' : `, ${s.groups} ${o.groupBy} groups`}`,
        ),
        ...summary.files.map((f) => `  ${f}`),
        '',
      ];
      process.stdout.write(lines.join('\n'));
      emptySplits(summary, o);
    });
}

/** A split that came out empty (few groups, or chained pairs in one group): a warning, or with --strict a refusal. */
function emptySplits(summary: ExportSummary, o: { groupBy?: string | undefined; strict: boolean }): void {
  const empty = summary.splits.filter((s) => s.pairs === 0 && summary.pairs > 0).map((s) => s.name);
  if (empty.length === 0) return;
  const groups = summary.splits.reduce((a, s) => a + s.groups, 0);
  const why =
    o.groupBy === undefined
      ? 'too few pairs for the shares'
      : `the pairs fall into ${groups} ${o.groupBy} group(s), and a group never straddles two splits (pairs chained through shared sentences join one group); try a finer --group-by or other --split shares`;
  const message = `split ${empty.join(', ')} is empty: ${why}`;
  if (o.strict) throw new ParamineError('BAD_INPUT', message, { field: 'split' });
  process.stderr.write(`paramine: warning: ${message}\n`);
}

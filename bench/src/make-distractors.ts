/**
 * The distractor corpus of the retrieval benchmarks in BENCHMARKS.md: every distinct sentence (after
 * normalization) of the English training-side files in ../shared/data, one per line. Validation pairs
 * queried by the benchmark (ParaSCI-ACL val, MultiPIT expert val) are not in it.
 *
 *   paramine bench distractors --out distractors.txt [--data ../shared/data]
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { writeFileAtomic } from '../../dist/durable.js';
import { parseInput } from '../../dist/validate.js';
import { distinctSentences } from './shared-sentences.js';

const FILES = [
  'parasci/acl/train.src',
  'multipit/auto/train.csv',
  'multipit/auto/val.csv',
  'multipit/expert/train.csv',
  'mrpc/train.tsv',
  'parasci/arxiv/val.src',
];

export function registerDistractors(bench: Command): void {
  bench
    .command('distractors')
    .description('write the retrieval benchmarks’ distractor corpus (distinct training-side sentences)')
    .requiredOption('--out <file>', 'where the sentences go, one a line')
    .option('--data <dir>', 'the shared data folder', '../shared/data')
    .action(async (raw: Record<string, unknown>) => {
      const o = parseInput(z.object({ out: z.string().min(1), data: z.string().min(1) }), raw, 'options');
      const out = await distinctSentences(
        FILES.map((f) => join(o.data, f)),
        undefined,
        (f, added) => process.stderr.write(`${f}: ${added} new sentences\n`),
      );
      await mkdir(dirname(o.out), { recursive: true });
      await writeFileAtomic(o.out, `${out.join('\n')}\n`);
      process.stderr.write(`${out.length} distractor sentences -> ${o.out}\n`);
    });
}

/** `paramine index`: CLI front end of the offline build. */
import type { Command } from 'commander';
import { DEFAULT_ENCODER } from '../models/catalog.js';
import { formatDuration } from '../progress.js';
import { parseGroupKeySpec } from '../store/index.js';
import { buildIndex } from './build.js';

const int = (v: string) => Number.parseInt(v, 10);

export function register(program: Command): void {
  program
    .command('index')
    .description('build a sharded FAISS index and LMDB sentence store from corpus files (resumable)')
    .requiredOption('--input <files...>', 'corpus files: .txt, .jsonl, .tsv/.csv with a text column; .gz too')
    .requiredOption('--out <dir>', 'index directory to create (e.g. indexes/NAME)')
    .option('--model <name|dir>', 'sentence encoder', DEFAULT_ENCODER)
    .option('--factory <str>', 'FAISS factory string, or auto (Flat when small, IVF-PQ above)', 'auto')
    .option('--shards <n>', 'number of shards', int, 1)
    .option('--metric <ip|l2>', 'inner product (cosine on unit vectors) or L2', 'ip')
    .option('--resume', 'continue an interrupted build in --out', false)
    .option('--min-tokens <n>', 'drop sentences with fewer tokens', int, 1)
    .option('--max-tokens <n>', 'drop sentences with more tokens', int, 128)
    .option('--max-chars <n>', 'drop lines longer than this before tokenizing', int, 5000)
    .option(
      '--on-bad-record <fail|skip>',
      'an invalid JSON line or table row: stop, or skip and report it',
      'fail',
    )
    .option(
      '--checkpoint-every <n>',
      'sentences per checkpoint (work redone at most after a crash)',
      int,
      8192,
    )
    .option('--encode-batch <n>', 'texts per encoder call', int, 256)
    .option('--keep-embeddings', 'keep the spilled float32 embeddings (work/) after the build', false)
    .option(
      '--vectors <f16|none>',
      'keep every embedding in the index as half floats (vectors.f16, 2 x dim bytes a sentence), or not',
      'f16',
    )
    .option('--seed <n>', 'seed of the training sample', int, 1234)
    .option(
      '--group-keys <keys>',
      'group tables to write at the end (comma-separated; KEY:date for windows; `term` tags definitions)',
      (v: string) =>
        v
          .split(',')
          .filter((k) => k !== '')
          .map(parseGroupKeySpec),
    )
    .option('--quiet', 'no progress output', false)
    .action(async (o: Record<string, unknown>) => {
      const log = (line: string) => process.stderr.write(`${line}\n`);
      const s = await buildIndex({ ...o, inputs: o.input } as Parameters<typeof buildIndex>[0], log);
      const c = s.counters;
      process.stdout.write(
        [
          `index written to ${String(o.out)}${s.resumed ? ' (resumed)' : ''}`,
          `  read ${c.read}, kept ${c.kept}, duplicates ${c.duplicates}, filtered ${c.empty + c.short + c.long} ` +
            `(empty ${c.empty}, short ${c.short}, long ${c.long}), bad records ${c.bad}`,
          `  vectors ${s.vectors} in ${s.shards} shard(s), factory ${s.factory}`,
          `  wall time ${formatDuration(s.wallMs / 1000)}, peak RSS ${(s.peakRssBytes / 2 ** 20).toFixed(0)} MiB`,
          '',
        ].join('\n'),
      );
    });
}

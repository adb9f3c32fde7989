/** `paramine index`: CLI front end of the offline build. */
import { type Command, Option } from 'commander';
import { CORPUS_FORMATS } from '../corpus/index.js';
import { DEFAULT_ENCODER } from '../models/catalog.js';
import { formatDuration } from '../progress.js';
import { parseGroupKeySpec } from '../store/index.js';
import { buildIndex } from './build.js';

const int = (v: string) => Number.parseInt(v, 10);

export function register(program: Command): void {
  indexCommand(program);
}

/** The `index` command with the one-machine build as its action (front ends may add options and wrap it). */
export function indexCommand(program: Command): Command {
  return program
    .command('index')
    .description('build a sharded FAISS index and LMDB sentence store from corpus files (resumable)')
    .requiredOption('--input <files...>', 'corpus files: .txt, .jsonl, .tsv/.csv with a text column; .gz too')
    .requiredOption('--out <dir>', 'index directory to create (e.g. indexes/NAME)')
    .addOption(
      new Option('--format <format>', "every input's format, where its extension does not say it").choices(
        CORPUS_FORMATS,
      ),
    )
    .option('--model <name|dir>', 'sentence encoder', DEFAULT_ENCODER)
    .option(
      '--factory <str>',
      'FAISS factory string, or auto (Flat up to 100k; IVF-PQ above, with an HNSW coarse quantizer from 10^6)',
      'auto',
    )
    .option(
      '--max-ram <size>',
      'RAM the served index may hold, e.g. 16GB: auto picks what fits, else refused before any work',
    )
    .option('--no-tune', 'skip measuring operating points after the build (Flat indexes never tune)')
    .option(
      '--target-recall <r>',
      'search defaults: the cheapest operating point reaching this recall@10',
      Number,
      0.95,
    )
    .option('--tune-queries <n>', 'held-out queries drawn from the collection for the tuning', int, 1000)
    .option('--refine <kind>', 'auto | vectors (exact, from vectors.f16) | sq8 | flat | none', 'auto')
    .option('--shards <n>', 'least number of shards (more when one would exceed --shard-memory)', int, 1)
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
    .option('--keep-embeddings', 'keep the spilled half-float embeddings (work/) after the build', false)
    .option(
      '--embeddings <files...>',
      'embeddings computed elsewhere: one .npy per --input file, row r-1 = record r (docs/embeddings.md)',
    )
    .option('--embeddings-check <n>', 'sentences re-encoded per checkpoint to check --embeddings', int, 4)
    .option('--train-points-per-list <n>', 'training vectors per IVF list', int, 40)
    .option('--train-sample <n>', 'most training vectors (default: points per list x lists)', int)
    .option('--train-memory <size>', 'vectors training holds at once, e.g. 1GB', '1GiB')
    .option('--shard-memory <size>', "one shard's working set while filled, e.g. 2GB", '2GiB')
    .option('--fill-jobs <n>', 'shards filled at once', int, 1)
    .option('--threads <n>', 'FAISS threads for training and filling (default: all cores)', int)
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
    .action(runIndex);
}

/** The one-machine build from parsed command-line options. */
export async function runIndex(o: Record<string, unknown>): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const s = await buildIndex({ ...o, inputs: o.input } as Parameters<typeof buildIndex>[0], log);
  process.stdout.write(summary(s, String(o.out)));
}

/** What `paramine index` prints when the build is done. */
function summary(s: Awaited<ReturnType<typeof buildIndex>>, out: string): string {
  const c = s.counters;
  return [
    `index written to ${out}${s.resumed ? ' (resumed)' : ''}`,
    `  read ${c.read}, kept ${c.kept}, duplicates ${c.duplicates}, filtered ${c.empty + c.short + c.long} ` +
      `(empty ${c.empty}, short ${c.short}, long ${c.long}), bad records ${c.bad}`,
    `  vectors ${s.vectors} in ${s.shards} shard(s), factory ${s.factory}`,
    `  ${s.reason}`,
    ...(s.tuned
      ? [
          `  search defaults nprobe ${s.tuned.nprobe}${s.tuned.efSearch ? `, efSearch ${s.tuned.efSearch}` : ''}, ` +
            `kFactor ${s.tuned.kFactor}: recall@10 ${s.tuned.recall}, p50 ${s.tuned.p50Ms} ms (tuned)`,
        ]
      : []),
    `  training ${formatDuration(s.trainMs / 1000)}, filling ${formatDuration(s.fillMs / 1000)}, ` +
      `wall time ${formatDuration(s.wallMs / 1000)}, peak RSS ${(s.peakRssBytes / 2 ** 20).toFixed(0)} MiB`,
    '',
  ].join('\n');
}

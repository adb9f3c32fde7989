/** `paramine index`: CLI front end of the offline build. */
import type { Command } from 'commander';
import { addFlags, flagValues } from '../config.js';
import { buildIndex } from '../indexer/build.js';
import { type BuildOptionsInput, buildOptionsSchema } from '../indexer/options.js';
import { formatDuration } from '../progress.js';

export function register(program: Command): void {
  indexCommand(program);
}

/** The `index` command with the one-machine build as its action (front ends may add options and wrap it). */
export function indexCommand(program: Command): Command {
  const cmd: Command = addFlags(
    program
      .command('index')
      .description('build a sharded FAISS index and LMDB sentence store from corpus files (resumable)'),
    buildOptionsSchema,
  ).action(() => runIndex(indexFlags(cmd)));
  return cmd;
}

/** The build options the flags of `cmd` give (validated by the build). */
export const indexFlags = (cmd: Command): Record<string, unknown> => flagValues(cmd, buildOptionsSchema);

/** The one-machine build from the flags' values. */
export async function runIndex(o: Record<string, unknown>): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const s = await buildIndex(o as BuildOptionsInput, log);
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

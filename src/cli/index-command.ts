/** `paramine index`: CLI front end of the offline build. */
import type { Command } from 'commander';
import { addFlags, flagValues } from '../config.js';
import { domainFollowers } from '../domain/index.js';
import { ParamineError } from '../errors.js';
import { buildIndex } from '../indexer/build.js';
import { type BuildOptionsInput, buildOptionsSchema } from '../indexer/options.js';
import { type RebuildOptions, rebuildIndex } from '../indexer/rebuild.js';
import { formatDuration } from '../progress.js';
import { followedRewrites } from '../store/index.js';

export function register(program: Command): void {
  indexCommand(program);
}

/** The `index` command with the one-machine build as its action (front ends may add options and wrap it). */
export function indexCommand(program: Command): Command {
  const cmd: Command = addFlags(
    program
      .command('index')
      .description('build a sharded FAISS index and LMDB sentence store from corpus files (resumable)')
      .option(
        '--rebuild <dir>',
        'retrain the index in DIR from its kept and added vectors (no re-embedding), folding in the sentences added since its build',
      )
      .option(
        '--compact <dir>',
        'fold the sentences added to the index in DIR into its shards and drop the deleted ones, keeping its trained quantizers (no retraining; honours --shard-memory)',
      ),
    buildOptionsSchema,
    // Not mandatory for commander: --rebuild needs none of them; the build's own schema asks for them.
    true,
  ).action(() => {
    const dir = rebuildDir(cmd);
    return dir === undefined ? runIndex(indexFlags(cmd)) : runRebuild(dir, rebuildOptions(cmd));
  });
  return cmd;
}

/** `paramine index --rebuild|--compact DIR` (front ends that replace the action call it first). */
export async function runRebuild(dir: string, options: RebuildOptions = {}): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  // The domains follow the rebuilt index (their columns extended to the added sentences).
  const r = await rebuildIndex(dir, log, domainFollowers, options);
  const done = r.retrained ? 'rebuilt' : 'compacted (trained quantizers kept)';
  process.stdout.write(
    [
      `index ${dir} ${done}${r.resumed ? ' (finished a run cut short)' : ''}: ${r.ntotal} sentences, ${r.folded} of them ` +
        `folded in from the writes, ${r.deleted} deleted (removed for good), factory ${r.factory}`,
      ...(r.carried.length > 0 ? [`  domains carried over: ${r.carried.join(', ')}`] : []),
      ...(r.regrouped.length > 0 ? [`  group tables built again: ${r.regrouped.join(', ')}`] : []),
      `  training ${formatDuration(r.trainMs / 1000)}, filling ${formatDuration(r.fillMs / 1000)}` +
        (r.tuned
          ? `; search defaults nprobe ${r.tuned.nprobe}, kFactor ${r.tuned.kFactor}: recall@10 ${r.tuned.recall} (tuned)`
          : ''),
      ...(r.retrained ? [] : ['  search defaults kept: paramine tune re-measures them']),
      // A serving process may run beside it only where lmdb-js has the fix; otherwise it was stopped.
      followedRewrites()
        ? '  a `paramine serve` on it takes up the new shards by itself within a second (no restart)'
        : '  start `paramine serve` on it again',
      '',
    ].join('\n'),
  );
}

/** The directory of `--rebuild DIR` or `--compact DIR`, if given (both: refused). */
export function rebuildDir(cmd: Command): string | undefined {
  const { rebuild, compact } = cmd.opts() as { rebuild?: string; compact?: string };
  if (rebuild !== undefined && compact !== undefined) {
    throw new ParamineError('BAD_INPUT', 'give --rebuild or --compact, not both', { field: 'compact' });
  }
  return rebuild ?? compact;
}

/** Retrain (--rebuild) or keep the quantizers (--compact), with the build's shard working-set cap. */
export function rebuildOptions(cmd: Command): RebuildOptions {
  const opts = cmd.opts() as { compact?: string; shardMemory?: unknown };
  return {
    retrain: opts.compact === undefined,
    shardMemory: buildOptionsSchema.shape.shardMemory.parse(opts.shardMemory),
  };
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
    `  embedding ${formatDuration(s.embedMs / 1000)}${s.resumed ? ' (all runs)' : ''}, training ${formatDuration(s.trainMs / 1000)}, filling ${formatDuration(s.fillMs / 1000)}, ` +
      `wall time ${formatDuration(s.wallMs / 1000)}, peak RSS ${(s.peakRssBytes / 2 ** 20).toFixed(0)} MiB`,
    '',
  ].join('\n');
}

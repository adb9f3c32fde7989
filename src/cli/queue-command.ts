/**
 * Command-line front end of the queue: `paramine worker`, and `paramine index --queue URL --work DIR`
 * (the `index` command of src/indexer with the distributed build as its action when --queue is given;
 * without it, the one-machine build runs exactly as before and BullMQ is never loaded).
 */
import type { Command } from 'commander';
import { addFlags, flagValues } from '../config.js';
import { formatDuration } from '../progress.js';
import {
  type QueueOptionsInput,
  queueOptionsSchema,
  type WorkerOptionsInput,
  workerOptionsSchema,
} from '../queue/options.js';
import {
  indexCommand,
  indexFlags,
  rebuildDir,
  rebuildOptions,
  runIndex,
  runRebuild,
} from './index-command.js';

const _int = (v: string) => Number.parseInt(v, 10);
const log = (line: string) => process.stderr.write(`${line}\n`);

/** Registers `index` (one-machine or distributed) and `worker`. */
export function register(program: Command): void {
  registerIndex(program);
  registerWorker(program);
}

export function registerIndex(program: Command): void {
  const cmd = indexCommand(program);
  // Lenient: --queue and --work are needed only for the distributed build (the coordinator checks them).
  addFlags(cmd, queueOptionsSchema, true).action(async () => {
    const rebuild = rebuildDir(cmd);
    if (rebuild !== undefined) return runRebuild(rebuild, rebuildOptions(cmd));
    const build = indexFlags(cmd);
    const q = flagValues(cmd, queueOptionsSchema);
    if (q.queue === undefined) return runIndex(build);
    const { buildDistributed } = await import('../queue/coordinator.js');
    const s = await buildDistributed(build, q as QueueOptionsInput, log);
    const c = s.counters;
    process.stdout.write(
      [
        `index written to ${String(build.out)}${s.resumed ? ' (resumed)' : ''} by the queue's workers`,
        `  read ${c.read}, kept ${c.kept}, duplicates ${c.duplicates}, filtered ${c.empty + c.short + c.long}, bad records ${c.bad}`,
        `  vectors ${s.vectors} in ${s.shards} shard(s), factory ${s.factory}; ${s.chunks} chunks${s.skipped.length ? `, given up: ${s.skipped.join(', ')}` : ''}`,
        `  wall time ${formatDuration(s.wallMs / 1000)}`,
        '',
      ].join('\n'),
    );
  });
}

function registerWorker(program: Command): void {
  const cmd: Command = addFlags(
    program
      .command('worker')
      .description('run distributed build and mining jobs from a queue (docs/distributed.md)'),
    workerOptionsSchema,
  );
  cmd.action(async () => {
    const { runWorker } = await import('../queue/worker.js');
    await runWorker(flagValues(cmd, workerOptionsSchema) as WorkerOptionsInput, log);
  });
}

/**
 * Command-line front end of the queue: `paramine worker`, and `paramine index --queue URL --work DIR`
 * (the `index` command of src/indexer with the distributed build as its action when --queue is given;
 * without it, the one-machine build runs exactly as before and BullMQ is never loaded).
 */
import type { Command } from 'commander';
import { addFlags, flagValues } from '../config.js';
import { indexCommand, indexFlags, runIndex } from '../indexer/command.js';
import { formatDuration } from '../progress.js';
import { type QueueOptionsInput, queueOptionsSchema } from './options.js';

const int = (v: string) => Number.parseInt(v, 10);
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
    const build = indexFlags(cmd);
    const q = flagValues(cmd, queueOptionsSchema);
    if (q.queue === undefined) return runIndex(build);
    const { buildDistributed } = await import('./coordinator.js');
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
  program
    .command('worker')
    .description('run distributed build and mining jobs from a queue (docs/distributed.md)')
    .requiredOption('--queue <url>', 'redis://HOST:PORT/DB of the job queue')
    .option('--concurrency <n>', 'jobs of each stage run at once', int, 1)
    .option('--threads <n>', 'encoder (ONNX Runtime) and FAISS threads', int, 1)
    .option('--stages <list>', 'comma-separated stages to run (default: all)', (v: string) => v.split(','))
    .option('--metrics-port <port>', 'serve Prometheus metrics on this port', int)
    .option(
      '--lock-ms <ms>',
      "a job's lock: a dead worker's job moves on this long after it died",
      int,
      30_000,
    )
    .option('--stalled-ms <ms>', 'how often to look for jobs of dead workers', int, 15_000)
    .action(async (o: Record<string, unknown>) => {
      const { runWorker } = await import('./worker.js');
      await runWorker(o as Parameters<typeof runWorker>[0], log);
    });
}

/**
 * `paramine mine --queue URL --work DIR …`: the `mine` command (src/mine, wired by cli.ts: front ends do
 * not import each other) with the distributed runner as its action when --queue is given.
 */
import type { Command } from 'commander';
import { ParamineError } from '../errors.js';
import type { JobSpecInput } from '../jobs/index.js';
import { formatDuration } from '../progress.js';

type Flags = Record<string, unknown>;

export function withQueue<F>(
  cmd: Command,
  specOf: (flags: F) => { spec: JobSpecInput; dataDir?: string },
  oneMachine: (flags: F) => Promise<void>,
): Command {
  return cmd
    .option(
      '--queue <url>',
      'distributed mining: redis://HOST:PORT/DB of the job queue (docs/distributed.md)',
    )
    .option('--work <dir>', 'distributed mining: work directory shared by every worker')
    .option('--range-size <n>', 'distributed mining: query sentences per range job', (v) => Number(v), 20_000)
    .action(async (o: Flags) => {
      if (o.queue === undefined) return oneMachine(o as F);
      if (o.work === undefined) {
        throw new ParamineError('BAD_INPUT', '--queue needs --work: a directory every worker mounts', {
          field: 'work',
        });
      }
      const started = Date.now();
      const { mineDistributed } = await import('./mine.js');
      const { spec } = specOf(o as F);
      const s = await mineDistributed(
        {
          index: String(o.index),
          out: String(o.out),
          queue: String(o.queue),
          work: String(o.work),
          spec,
          reranker: o.rerank ? (o.reranker as string | undefined) : false,
          rangeSize: Number(o.rangeSize),
          quiet: o.quiet === true,
        },
        (line) => process.stderr.write(`${line}\n`),
      );
      process.stdout.write(
        [
          `${s.pairs} pairs from ${s.queries} sentences (${s.ranges} range jobs) written to ${String(o.out)}`,
          ...(s.clusters === undefined ? [] : [`  ${s.clusters} clusters written to ${s.clustersFile}`]),
          `  wall time ${formatDuration((Date.now() - started) / 1000)}`,
          '',
        ].join('\n'),
      );
    });
}

/**
 * `paramine mine --queue URL --work DIR …`: the `mine` command (mine-command.ts, joined here by cli.ts)
 * with the distributed runner as its action when --queue is given.
 */
import type { Command } from 'commander';
import { ParamineError } from '../errors.js';
import { readManifest } from '../index/index.js';
import type { JobRunner, JobSpecInput } from '../jobs/index.js';
import { formatDuration } from '../progress.js';
import { DEFAULT_RANGE_SIZE } from '../queue/options.js';

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
    .option(
      '--range-size <n>',
      'distributed mining: query sentences per range job',
      (v) => Number(v),
      DEFAULT_RANGE_SIZE,
    )
    .action(async (o: Flags) => {
      if (o.queue === undefined) return oneMachine(o as F);
      if (o.work === undefined) {
        throw new ParamineError('BAD_INPUT', '--queue needs --work: a directory every worker mounts', {
          field: 'work',
        });
      }
      const started = Date.now();
      const { mineDistributed } = await import('../queue/mine.js');
      const { spec, dataDir } = specOf(o as F);
      const s = await mineDistributed(
        {
          index: String(o.index),
          out: String(o.out),
          queue: String(o.queue),
          work: String(o.work),
          spec,
          reranker: spec.rerank !== undefined ? (o.reranker as string | undefined) : false,
          rangeSize: Number(o.rangeSize),
          quiet: o.quiet === true,
          dataDir,
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

/**
 * `paramine serve --queue URL --work DIR`: POST /v1/jobs runs each job's ranges on the queue's workers
 * (src/queue/mine.ts queueJobRunner); without --queue, jobs run in the service as before. Given to the
 * server's `serve` command by cli.ts (structurally: front ends do not import each other).
 */
export const serveWithQueue = {
  options(cmd: Command): void {
    cmd
      .option(
        '--queue <url>',
        "mining jobs run on this queue's workers: redis://HOST:PORT/DB (docs/distributed.md)",
      )
      .option('--work <dir>', 'with --queue: work directory shared by every worker')
      .option(
        '--range-size <n>',
        'with --queue: query sentences per range job',
        (v) => Number(v),
        DEFAULT_RANGE_SIZE,
      )
      .option(
        '--write-queue <url>',
        "added sentences (POST /v1/sentences) are embedded by this queue's workers, not here: redis://HOST:PORT/DB (docs/updates.md)",
      );
  },
  async writeEmbedder(raw: Flags, index: string) {
    if (raw.writeQueue === undefined) return undefined;
    const { model, dim } = await readManifest(index);
    // BullMQ is loaded only when the writes go through the queue.
    const { QueueEmbedder } = await import('../queue/add.js');
    return QueueEmbedder.open(String(raw.writeQueue), model, dim);
  },
  jobRunner(raw: Flags, index: string): JobRunner | undefined {
    if (raw.queue === undefined) return undefined;
    if (typeof raw.work !== 'string') {
      throw new ParamineError('BAD_INPUT', '--queue needs --work: a directory every worker mounts', {
        field: 'work',
      });
    }
    const options = {
      queue: String(raw.queue),
      work: raw.work,
      index,
      reranker: raw.reranker === false ? (false as const) : (raw.reranker as string | undefined),
      rangeSize: Number(raw.rangeSize ?? DEFAULT_RANGE_SIZE),
      // A job's `docPairs.path`: the workers read it from the same shared path.
      dataDir: typeof raw.dataDir === 'string' ? raw.dataDir : undefined,
    };
    // BullMQ is loaded with the first job, not with the service.
    return async (...args) => (await import('../queue/mine.js')).queueJobRunner(options)(...args);
  },
};

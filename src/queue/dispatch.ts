/**
 * The coordinator's side of a stage: queue every job whose output is not there yet (job ids derived from
 * the build and the chunk / partition / piece, so adding twice is a no-op and a restarted coordinator
 * finds its jobs), then wait until every output is published, showing progress. A job that failed after
 * all its attempts stops the build with its error (naming the chunk), or is given up with `skip`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { type ErrorCode, isErrorCode, ParamineError } from '../errors.js';
import { createProgress } from '../progress.js';
import { connectionOptions, JOB_OPTIONS, parseQueueUrl, queueName, type Stage } from './connection.js';
import type { QueueMetrics } from './metrics.js';

export interface StageJob {
  /** BullMQ job id: unique per build and job (no ':'). */
  id: string;
  /** For messages: "chunk 7 (corpus.txt bytes …)". */
  name: string;
  data: Record<string, unknown>;
  /** True once the job's output is published (its marker is valid). */
  done: () => boolean;
}

export interface StageContext {
  queue: Queue;
  stage: Stage;
  onFailed: 'stop' | 'skip';
  quiet: boolean;
  metrics?: QueueMetrics;
  log: (line: string) => void;
  /** Poll interval (ms). */
  pollMs?: number;
  /**
   * Checked every poll: true stops waiting at once; the jobs not yet started leave the queue (a later run
   * queues them again), running ones finish and their output stays for that run.
   */
  stop?: () => boolean;
  /** Called every poll (e.g. to merge the outputs published so far). */
  onPoll?: () => Promise<void>;
}

/** The worker's error code ("BAD_FILE: …", as src/queue/worker.ts reports it), else INTERNAL. */
function codeOf(reason: string): ErrorCode {
  const code = /^([A-Z_]+): /.exec(reason)?.[1];
  return code !== undefined && isErrorCode(code) ? code : 'INTERNAL';
}

async function ensureQueued(queue: Queue, job: StageJob, stage: Stage): Promise<void> {
  const existing = await queue.getJob(job.id);
  if (existing) {
    const state = await existing.getState();
    if (state === 'failed') {
      await existing.retry('failed');
      return;
    }
    if (state !== 'completed') return;
    // Completed but its output is gone (deleted by hand): run it again.
    await existing.remove();
  }
  await queue.add(stage, job.data, { ...JOB_OPTIONS, jobId: job.id });
}

/** Runs the jobs of one stage to completion; returns the indices of the jobs given up (skip). */
export async function runStage(ctx: StageContext, jobs: readonly StageJob[]): Promise<number[]> {
  const pending = new Set<number>();
  for (const [i, j] of jobs.entries()) if (!j.done()) pending.add(i);
  for (const i of pending) await ensureQueued(ctx.queue, jobs[i] as StageJob, ctx.stage);
  const bar = createProgress({ label: ctx.stage, unit: 'jobs', quiet: ctx.quiet });
  const given: number[] = [];
  const started = Date.now();
  const report = async () => {
    const finished = jobs.length - pending.size;
    ctx.metrics?.progress.set({ stage: ctx.stage }, jobs.length ? finished / jobs.length : 1);
    const c = await ctx.queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
    bar.update(finished, jobs.length, {
      waiting: (c.waiting ?? 0) + (c.delayed ?? 0),
      active: c.active ?? 0,
      failed: c.failed ?? 0,
    });
  };
  let round = 0;
  while (pending.size > 0) {
    await sleep(ctx.pollMs ?? 250);
    if (ctx.stop?.()) {
      for (const i of pending) {
        // An active job is locked by its worker: remove() refuses it, and it finishes on its own.
        await (await ctx.queue.getJob((jobs[i] as StageJob).id))?.remove().catch(() => {});
      }
      bar.stop();
      ctx.log(`${ctx.stage}: stopped with ${pending.size} of ${jobs.length} jobs not done`);
      return given;
    }
    await ctx.onPoll?.();
    for (const i of [...pending]) if ((jobs[i] as StageJob).done()) pending.delete(i);
    if (round++ % 4 === 0) {
      await report();
      for (const i of [...pending]) {
        const job = jobs[i] as StageJob;
        const state = await ctx.queue.getJobState(job.id);
        if (state === 'unknown') {
          await ensureQueued(ctx.queue, job, ctx.stage); // removed from Redis: queue it again
        } else if (state === 'failed' && !job.done()) {
          const reason = (await ctx.queue.getJob(job.id))?.failedReason ?? 'unknown error';
          if (ctx.onFailed === 'stop') {
            bar.stop();
            throw new ParamineError(
              codeOf(reason),
              `${ctx.stage} job for ${job.name} failed after ${JOB_OPTIONS.attempts} attempts: ${reason}`,
            );
          }
          ctx.log(`giving up ${job.name} after ${JOB_OPTIONS.attempts} attempts: ${reason}`);
          given.push(i);
          pending.delete(i);
        }
      }
    }
  }
  await report();
  bar.stop();
  ctx.log(`${ctx.stage}: ${jobs.length} jobs in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return given;
}

/** runStage on the stage's queue at `url`, opened for the call and closed after (mine.ts, align.ts). */
export async function runStageAt(
  url: string,
  ctx: Omit<StageContext, 'queue'>,
  jobs: readonly StageJob[],
): Promise<number[]> {
  const target = parseQueueUrl(url);
  const queue = new Queue(queueName(ctx.stage), {
    connection: connectionOptions(target),
    prefix: target.prefix,
  });
  try {
    return await runStage({ ...ctx, queue }, jobs);
  } finally {
    await queue.close();
  }
}

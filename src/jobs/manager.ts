/**
 * Job lifecycle over one served index: validates and persists new jobs, runs at most `maxConcurrent` at
 * a time (the rest wait in order), resumes unfinished jobs after a restart, cancels, and reports
 * progress with rate and ETA. The HTTP routes and `paramine mine` are thin front ends over it.
 */
import { randomUUID } from 'node:crypto';
import { diskFullOr, ParamineError } from '../errors.js';
import { resolveModelDir } from '../models/resolve.js';
import { parseInput } from '../validate.js';
import { clearCheckpoint } from './align-checkpoint.js';
import { type JobContext, nextIdOf } from './job-context.js';
import { checkJobScope } from './pairs.js';
import { resolveDataPath } from './queries.js';
import { alignWork, openJobQueries, runJob } from './runner.js';
import type { SinceSource } from './since.js';
import { type JobSpecInput, jobSpecSchema } from './spec.js';
import { FINISHED, type JobRecord, type JobStore } from './store.js';

export interface JobStatus extends JobRecord {
  /** Query sentences per second of running time, and the seconds left at that rate. */
  rate: number | null;
  etaSeconds: number | null;
}

interface Running {
  promise: Promise<void>;
  stop?: 'cancel' | 'pause';
}

/** Runs one job to its end (or to a stop): runJob here, or another engine (src/queue spreads it). */
export type JobRunner = (
  job: JobRecord,
  ctx: JobContext,
  store: JobStore,
  control: { stop(): 'cancel' | 'pause' | undefined },
) => Promise<JobRecord>;

export interface ManagerOptions {
  maxConcurrent?: number;
  /** The runner of every job (default: runJob, in this process). */
  runner?: JobRunner | undefined;
  /** Called when a job fails (the service logs it). */
  onError?: (job: JobRecord, e: unknown) => void;
}

export class JobManager {
  private readonly queue: string[] = [];
  private readonly running = new Map<string, Running>();
  private readonly maxConcurrent: number;
  private closing = false;

  /** Whether a job is running now. */
  get busy(): boolean {
    return this.running.size > 0;
  }

  /** True once close() was called: following streams end instead of waiting for paused jobs. */
  get closed(): boolean {
    return this.closing;
  }

  constructor(
    private readonly jobs: JobStore,
    private readonly ctx: JobContext,
    private readonly options: ManagerOptions = {},
  ) {
    this.maxConcurrent = options.maxConcurrent ?? 1;
  }

  /** Re-queues the jobs a previous process left queued or running on this index (or stopped by a full disk), oldest first. */
  resume(): JobRecord[] {
    const unfinished = this.jobs
      .list()
      .filter((j) => j.index.name === this.ctx.index.name)
      .filter((j) => !FINISHED.includes(j.state) || (j.state === 'failed' && j.error?.code === 'DISK_FULL'));
    for (const j of unfinished) this.queue.push(j.id);
    this.pump();
    return unfinished;
  }

  async create(input: unknown): Promise<JobRecord> {
    const spec = parseInput(jobSpecSchema, input as JobSpecInput, 'job');
    if (spec.index !== undefined && spec.index !== this.ctx.index.name) {
      throw new ParamineError(
        'NOT_FOUND',
        `unknown index "${spec.index}"; this service mines "${this.ctx.index.name}"`,
        {
          field: 'index',
        },
      );
    }
    const { labels } = this.ctx.core;
    if (spec.rerank && !this.ctx.core.canRerank) {
      throw new ParamineError(
        'BAD_INPUT',
        'rerank needs a cross-encoder; start the service with --reranker',
        {
          field: 'rerank',
        },
      );
    }
    const unknown = spec.rerank?.labels?.filter((l) => !labels.includes(l)) ?? [];
    if (unknown.length > 0) {
      throw new ParamineError(
        'BAD_INPUT',
        `unknown label(s) ${unknown.join(', ')}; the cross-encoder has ${labels.join(', ')}`,
        { field: 'rerank.labels' },
      );
    }
    checkJobScope(spec, this.ctx.core.canRerank ? labels : undefined, this.ctx.groups);
    // An unknown or stale domain fails the request, not the job later.
    if (spec.domain) await this.ctx.core.checkDomain(spec.domain, spec.rerank !== undefined);
    // A span model that is not there fails the request, not the job later.
    if (spec.subSentence?.method === 'span') resolveModelDir(spec.subSentence.model, 'subSentence.model');
    // So does a document-pairs file outside the data directory, or a service started without one.
    if (spec.docPairs?.path !== undefined)
      resolveDataPath(spec.docPairs.path, this.ctx.dataDir, 'docPairs.path');
    // Opening the source checks the scope (range bounds, data-directory paths) and counts its sentences.
    // The sentences there now are the job's; those added later are the next `since` job's.
    const until = nextIdOf(this.ctx);
    if (spec.untilId !== undefined && spec.untilId > until) {
      throw new ParamineError('BAD_INPUT', `untilId ${spec.untilId} is past the index's ${until} sentences`, {
        field: 'untilId',
      });
    }
    const pinned = { ...spec, untilId: spec.untilId ?? until, index: this.ctx.index.name };
    const source = await openJobQueries(pinned, this.ctx);
    const job: JobRecord = {
      id: randomUUID(),
      spec: pinned,
      index: { name: this.ctx.index.name, identity: this.ctx.index.identity },
      state: 'queued',
      createdAt: new Date().toISOString(),
      total: source.total,
      processed: 0,
      pairs: 0,
      runMs: 0,
    };
    // A `since` job's queries come from a neighbourhood search: fixed now, so a resumed run reads the same.
    if ('first' in source) await this.jobs.putQueries(job.id, source.first, (source as SinceSource).ids);
    await this.jobs.put(job);
    this.queue.push(job.id);
    this.pump();
    return job;
  }

  get(id: string): JobStatus {
    const job = this.jobs.get(id);
    if (job === undefined) throw new ParamineError('NOT_FOUND', `no job ${id}`, { field: 'id' });
    return withRate(job);
  }

  list(): JobStatus[] {
    return this.jobs.list().map(withRate);
  }

  /** Cancels a queued or running job (running ones stop at their next batch boundary). */
  async cancel(id: string): Promise<JobStatus> {
    const job = this.get(id);
    if (FINISHED.includes(job.state)) return job;
    const run = this.running.get(id);
    if (run) {
      run.stop = 'cancel';
      await run.promise;
    } else {
      const i = this.queue.indexOf(id);
      if (i >= 0) this.queue.splice(i, 1);
      await this.jobs.put({ ...job, state: 'cancelled', finishedAt: new Date().toISOString() });
    }
    return this.get(id);
  }

  /** Resolves when the job has finished (done, failed or cancelled). */
  async wait(id: string, onProgress?: (job: JobStatus) => void, pollMs = 500): Promise<JobStatus> {
    for (;;) {
      const job = this.get(id);
      onProgress?.(job);
      if (FINISHED.includes(job.state)) return job;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  /** Stops taking work and pauses running jobs at a batch boundary; they resume on the next start. */
  async close(): Promise<void> {
    this.closing = true;
    this.queue.length = 0;
    for (const r of this.running.values()) r.stop ??= 'pause';
    await Promise.all([...this.running.values()].map((r) => r.promise));
  }

  private pump(): void {
    while (!this.closing && this.running.size < this.maxConcurrent && this.queue.length > 0) {
      const id = this.queue.shift() as string;
      const job = this.jobs.get(id);
      if (job === undefined || FINISHED.includes(job.state)) continue;
      const entry: Running = { promise: Promise.resolve() };
      entry.promise = (this.options.runner ?? runJob)(job, this.ctx, this.jobs, { stop: () => entry.stop })
        .then(() => undefined)
        .catch(async (e: unknown) => {
          const latest = this.jobs.get(id) ?? job;
          const err = diskFullOr(e, `job ${id}`);
          const code = err instanceof ParamineError ? err.code : 'INTERNAL';
          // Recorded when the disk lets it be; a job stopped by a full disk resumes at the next start
          // (its committed batches are kept), see resume().
          await this.jobs
            .put({
              ...latest,
              state: 'failed',
              finishedAt: new Date().toISOString(),
              error: { code, message: (err as Error).message },
            })
            .catch((again: unknown) => this.options.onError?.(latest, again));
          // Only a job stopped by a full disk resumes: another's alignment work would never be read.
          if (code !== 'DISK_FULL') await clearCheckpoint(alignWork(this.jobs, id)).catch(() => {});
          this.options.onError?.(latest, err);
        })
        .finally(() => {
          this.running.delete(id);
          this.pump();
        });
      this.running.set(id, entry);
    }
  }
}

function withRate(job: JobRecord): JobStatus {
  const rate = job.runMs > 0 && job.processed > 0 ? job.processed / (job.runMs / 1000) : null;
  const left = job.total - job.processed;
  return {
    ...job,
    rate,
    etaSeconds: FINISHED.includes(job.state) ? 0 : rate === null ? null : left / rate,
  };
}

/**
 * `paramine worker`: runs jobs of every stage (or those given) from the queue. One BullMQ worker a stage,
 * `concurrency` jobs of it at once; the encoder (ORT) and FAISS use `threads` threads. Jobs are
 * idempotent (src/queue/layout.ts), so at-least-once delivery is safe: a job whose worker died is taken
 * up by another after the stall interval; a failed attempt is retried with exponential backoff.
 * SIGTERM / SIGINT: finish the active jobs and stop; a second signal stops at once (the jobs go back to
 * waiting after the stall interval).
 */
import { type Job, UnrecoverableError, Worker } from 'bullmq';
import { z } from 'zod';
import { Encoder } from '../encode/index.js';
import { isParamineError, ParamineError } from '../errors.js';
import { resolveModelDir } from '../models/resolve.js';
import { parseInput } from '../validate.js';
import { runAddJob } from './add.js';
import { AlignRunner, runAlignShare } from './align.js';
import { connectionOptions, parseQueueUrl, queueName, type Stage } from './connection.js';
import { runDedup } from './dedup.js';
import { buildOptions, runEmbed } from './embed.js';
import { closeTemplates, runFill } from './fill.js';
import { QueueMetrics } from './metrics.js';
import { MineRunner, runMineRange } from './mine-range.js';
import { type WorkerOptionsInput, workerOptionsSchema } from './options.js';
import { type QueueBuild, readBuild } from './state.js';

const baseData = z.object({ work: z.string().min(1), build: z.string().min(1) });
const embedData = baseData.extend({ chunk: z.number().int().min(0) });
const dedupData = baseData.extend({ partition: z.number().int().min(0) });
const fillData = baseData.extend({
  shard: z.number().int().min(0),
  piece: z.number().int().min(0),
  first: z.number().int().min(0),
  count: z.number().int().min(0),
});

type Log = (line: string) => void;

/** A worker process's resources, opened on first use and shared by its jobs. */
class Resources {
  private encoders = new Map<string, Promise<Encoder>>();
  readonly mine: MineRunner;
  readonly align: AlignRunner;
  constructor(readonly threads: number) {
    this.mine = new MineRunner(threads);
    this.align = new AlignRunner(threads);
  }

  encoder(b: QueueBuild): Promise<Encoder> {
    return this.encoderOf(String(b.options.model), b.model, "the build's");
  }

  /** The encoder of model directory `name`, checked to be `want` (an index's or a build's model). */
  async encoderOf(
    name: string,
    want: { id: string; sha256: string },
    whose = "the index's",
  ): Promise<Encoder> {
    const dir = resolveModelDir(name);
    let e = this.encoders.get(dir);
    if (!e) {
      e = Encoder.open(dir, { threads: this.threads });
      this.encoders.set(dir, e);
    }
    const encoder = await e;
    if (encoder.onnxSha256 !== want.sha256) {
      throw new UnrecoverableError(
        `MODEL_MISMATCH: this worker's ${dir} (sha256 ${encoder.onnxSha256.slice(0, 12)}…) is not ${whose} model ${want.id} (${want.sha256.slice(0, 12)}…)`,
      );
    }
    return encoder;
  }

  async close(): Promise<void> {
    for (const e of this.encoders.values()) await (await e.catch(() => undefined))?.close();
    await closeTemplates();
    await this.mine.close();
    await this.align.close();
  }
}

function buildOf(work: string, id: string): QueueBuild {
  const b = readBuild(work);
  if (!b)
    throw new ParamineError('FILE_NOT_FOUND', `${work}/build.json is missing: is the work directory shared?`);
  if (b.id !== id) throw new UnrecoverableError(`job of build ${id}, but ${work} holds build ${b.id}`);
  return b;
}

async function processJob(stage: Stage, job: Job, res: Resources, metrics: QueueMetrics): Promise<unknown> {
  if (stage === 'embed') {
    const d = embedData.parse(job.data);
    const b = buildOf(d.work, d.build);
    buildOptions(b);
    const r = await runEmbed(d.work, b, d.chunk, await res.encoder(b));
    metrics.items.inc({ stage }, r.counters.read);
    return r;
  }
  if (stage === 'dedup') {
    const d = dedupData.parse(job.data);
    const r = runDedup(d.work, buildOf(d.work, d.build), d.partition);
    metrics.items.inc({ stage }, r.keys);
    return r;
  }
  if (stage === 'fill') {
    const d = fillData.parse(job.data);
    const r = await runFill(d.work, buildOf(d.work, d.build), d, res.threads);
    metrics.items.inc({ stage }, r.count);
    return r;
  }
  if (stage === 'add') {
    const r = await runAddJob(job.data, (model) => res.encoderOf(model.id, model));
    metrics.items.inc({ stage }, (job.data as { texts: unknown[] }).texts.length);
    return r;
  }
  if (stage === 'align') {
    const r = await runAlignShare(job.data, res.align);
    metrics.items.inc({ stage }, r.documents);
    return r;
  }
  const r = await runMineRange(job.data, res.mine);
  metrics.items.inc({ stage }, r.queries);
  return r;
}

export async function runWorker(input: WorkerOptionsInput, log: Log = () => {}): Promise<void> {
  const o = parseInput(workerOptionsSchema, input, 'options');
  const target = parseQueueUrl(o.queue);
  const metrics = new QueueMetrics(new Map());
  if (o.metricsPort !== undefined) log(`metrics on :${await metrics.listen(o.metricsPort)}/metrics`);
  const res = new Resources(o.threads);
  const workers = o.stages.map((stage) => {
    const w = new Worker(
      queueName(stage),
      async (job: Job) => {
        log(`${stage} ${job.id} started (attempt ${job.attemptsMade + 1})`);
        const end = metrics.seconds.startTimer({ stage });
        try {
          return await processJob(stage, job, res, metrics);
        } catch (e) {
          // Input errors repeat on every attempt: still retried (a shared disk may have hiccuped), named.
          if (isParamineError(e)) throw new Error(`${e.code}: ${e.message}`);
          throw e;
        } finally {
          end();
        }
      },
      {
        connection: connectionOptions(target),
        prefix: target.prefix,
        concurrency: o.concurrency,
        lockDuration: o.lockMs,
        stalledInterval: o.stalledMs,
        maxStalledCount: 3,
      },
    );
    w.on('completed', (job) => {
      metrics.jobs.inc({ stage, outcome: 'completed' });
      log(`${stage} ${job.id} done`);
    });
    w.on('failed', (job, e) => {
      metrics.jobs.inc({ stage, outcome: 'failed' });
      log(`${stage} ${job?.id ?? '?'} failed (attempt ${job?.attemptsMade ?? '?'}): ${e.message}`);
    });
    w.on('stalled', (id) => {
      metrics.stalled.inc({ stage });
      log(`${stage} ${id} stalled (its worker stopped): back to waiting`);
    });
    w.on('error', (e) => log(`${stage} worker error: ${e.message}`));
    return w;
  });
  log(
    `worker ${process.pid}: stages ${o.stages.join(', ')}, concurrency ${o.concurrency}, threads ${o.threads}`,
  );
  await new Promise<void>((done) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        log(`${signal} again: stopping now; active jobs return to waiting after the stall interval`);
        void Promise.all(workers.map((w) => w.close(true))).finally(done);
        return;
      }
      stopping = true;
      log(`${signal}: finishing active jobs, taking no new ones`);
      void Promise.all(workers.map((w) => w.close())).finally(done);
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
  await res.close();
  await metrics.close();
}

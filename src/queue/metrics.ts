/**
 * Prometheus metrics of the queue, served on --metrics-port by the coordinator and by each worker:
 *
 *   paramine_queue_jobs{stage,state}            jobs per stage and BullMQ state (depth = waiting + delayed)
 *   paramine_queue_stage_progress{stage}        the coordinator's finished / total jobs of the stage running
 *   paramine_worker_jobs_total{stage,outcome}   jobs this worker finished: completed | failed
 *   paramine_worker_stalled_total{stage}        jobs this worker found stalled (a worker died holding them)
 *   paramine_worker_items_total{stage}          sentences embedded, vectors filled, queries mined: rate() gives throughput
 *   paramine_worker_job_seconds{stage}          job durations
 */
import { createServer, type Server } from 'node:http';
import type { Queue } from 'bullmq';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Stage } from './connection.js';

const STATES = ['waiting', 'active', 'delayed', 'completed', 'failed', 'paused'] as const;

export class QueueMetrics {
  readonly registry = new Registry();
  readonly progress: Gauge<'stage'>;
  readonly jobs: Counter<'stage' | 'outcome'>;
  readonly stalled: Counter<'stage'>;
  readonly items: Counter<'stage'>;
  readonly seconds: Histogram<'stage'>;
  private server: Server | undefined;

  constructor(queues: ReadonlyMap<Stage, Queue>) {
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'paramine_queue_jobs',
      help: 'jobs per stage and state',
      labelNames: ['stage', 'state'],
      registers: [this.registry],
      async collect() {
        for (const [stage, q] of queues) {
          const counts = await q.getJobCounts(...STATES);
          for (const s of STATES) this.set({ stage, state: s }, counts[s] ?? 0);
        }
      },
    });
    this.progress = new Gauge({
      name: 'paramine_queue_stage_progress',
      help: "the coordinator's finished share of the running stage (0..1)",
      labelNames: ['stage'],
      registers: [this.registry],
    });
    this.jobs = new Counter({
      name: 'paramine_worker_jobs_total',
      help: 'jobs finished by this worker',
      labelNames: ['stage', 'outcome'],
      registers: [this.registry],
    });
    this.stalled = new Counter({
      name: 'paramine_worker_stalled_total',
      help: 'stalled jobs found by this worker (moved back to waiting)',
      labelNames: ['stage'],
      registers: [this.registry],
    });
    this.items = new Counter({
      name: 'paramine_worker_items_total',
      help: 'sentences embedded, vectors filled, queries mined',
      labelNames: ['stage'],
      registers: [this.registry],
    });
    this.seconds = new Histogram({
      name: 'paramine_worker_job_seconds',
      help: 'job durations',
      labelNames: ['stage'],
      buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 1800],
      registers: [this.registry],
    });
  }

  /** Serves GET /metrics on 127.0.0.1 (or host) : port; resolves with the bound port (0 picks one). */
  async listen(port: number, host = '0.0.0.0'): Promise<number> {
    const server = createServer((req, res) => {
      if (req.url !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      this.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': this.registry.contentType }).end(text),
        (e: unknown) => res.writeHead(500).end(String(e)),
      );
    });
    this.server = server;
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(port, host, () => ok());
    });
    const addr = server.address();
    return typeof addr === 'object' && addr ? addr.port : port;
  }

  async close(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (s) await new Promise<void>((ok) => s.close(() => ok()));
  }
}

/**
 * Prometheus metrics: per-route request latency, model batch sizes and queue depths, refused requests,
 * stage latencies. The service reports through `hooks` (it knows nothing of Prometheus).
 */
import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ServiceHooks } from '../service/index.js';
import type { RoutePlugin } from './context.js';

export class Metrics {
  readonly registry = new Registry();
  readonly requestSeconds = new Histogram({
    name: 'paramine_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly batchSize = new Histogram({
    name: 'paramine_encoder_batch_size',
    help: 'Texts per encoder call after dynamic batching',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'paramine_encoder_queue_depth',
    help: 'Texts waiting for the encoder',
    registers: [this.registry],
  });
  readonly rerankBatchSize = new Histogram({
    name: 'paramine_reranker_batch_size',
    help: 'Pairs per cross-encoder call after dynamic batching',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers: [this.registry],
  });
  readonly rerankQueueDepth = new Gauge({
    name: 'paramine_reranker_queue_depth',
    help: 'Pairs waiting for the cross-encoder',
    registers: [this.registry],
  });
  readonly teacherQueueDepth = new Gauge({
    name: 'paramine_teacher_queue_depth',
    help: "Pairs waiting for the cascade's teacher",
    registers: [this.registry],
  });
  readonly rejected = new Counter({
    name: 'paramine_rejected_total',
    help: "Calls a model queue refused as OVERLOADED (a 503, except the teacher's: balanced then keeps the student's labels)",
    labelNames: ['model'] as const,
    registers: [this.registry],
  });
  readonly dropped = new Counter({
    name: 'paramine_dropped_total',
    help: 'Queued inputs dropped before reaching the model because their client disconnected',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });
  readonly stageSeconds = new Histogram({
    name: 'paramine_stage_duration_seconds',
    help: 'Latency of pipeline stages (encode, search, rerank)',
    labelNames: ['stage'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly candidates = new Counter({
    name: 'paramine_candidates_returned_total',
    help: 'Paraphrase candidates returned by /v1/search',
    registers: [this.registry],
  });

  readonly labeledPairs = new Counter({
    name: 'paramine_labeled_pairs_total',
    help: 'Pairs labeled in the balanced mode, by who labeled them: the student, the teacher, or the student because the teacher was overloaded (student_shed)',
    labelNames: ['by'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'paramine_' });
  }

  /** What the service calls; pass as `openService({ hooks })`. */
  readonly hooks: ServiceHooks = {
    onBatch: (model, size) => (model === 'encoder' ? this.batchSize : this.rerankBatchSize).observe(size),
    onQueueDepth: (model, depth) =>
      ({ encoder: this.queueDepth, reranker: this.rerankQueueDepth, teacher: this.teacherQueueDepth })[
        model
      ].set(depth),
    onRejected: (model) => this.rejected.inc({ model }),
    onDropped: (model, items) => this.dropped.inc({ model }, items),
    onStage: (stage, ms) => this.stageSeconds.observe({ stage }, ms / 1000),
    onEscalated: (pairs, of, shed) => {
      this.labeledPairs.inc({ by: 'student' }, of - pairs - shed);
      this.labeledPairs.inc({ by: 'teacher' }, pairs);
      this.labeledPairs.inc({ by: 'student_shed' }, shed);
    },
  };

  /** Times every response of the app. */
  install(app: FastifyInstance): void {
    app.addHook('onResponse', async (req, reply) => {
      const route = req.routeOptions.url ?? 'unmatched';
      this.requestSeconds.observe(
        { method: req.method, route, status: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
    });
  }

  /** GET /metrics, a read route. */
  readonly routes: RoutePlugin = async (app, { auth }) => {
    app.addHook('onRequest', auth.require('read'));
    app.get('/metrics', async (_req, reply) => {
      reply.type(this.registry.contentType);
      return this.registry.metrics();
    });
  };
}

/** A real small service for route tests: the demo corpus's first verses, the real encoder and reranker. */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AnnotationStore } from '../../src/annotations/index.js';
import { buildIndex } from '../../src/indexer/build.js';
import type { BuildOptionsInput } from '../../src/indexer/options.js';
import type { JobManager, JobStore } from '../../src/jobs/index.js';
import { type AppOptions, buildApp } from '../../src/server/app.js';
import { type AppContext, DEFAULT_LIMITS } from '../../src/server/context.js';
import { Metrics } from '../../src/server/metrics.js';
import {
  DEFAULT_RERANKER,
  openService,
  type Service,
  type ServiceHooks,
  type ServiceOptions,
} from '../../src/service/index.js';
import { demoSlice } from './corpus.js';

export const HAS_RERANKER = existsSync(join('models', DEFAULT_RERANKER, 'config.json'));

export interface TestService {
  dir: string;
  index: string;
  service: Service;
  jobs: JobManager;
  jobStore: JobStore;
  annotations: AnnotationStore;
  metrics: Metrics;
  /** The data directory job file scopes resolve in. */
  dataDir: string;
  app(options?: AppOptions, ctx?: Partial<AppContext>): FastifyInstance;
  close(): Promise<void>;
}

/** Every hook of `a` and `b` (Prometheus and a test's own observers). */
function bothHooks(a: ServiceHooks, b: ServiceHooks): ServiceHooks {
  const both: ServiceHooks = {};
  for (const name of [
    'onBatch',
    'onQueueDepth',
    'onRejected',
    'onDropped',
    'onStage',
    'onEscalated',
  ] as const) {
    type Hook = ((...args: unknown[]) => void) | undefined;
    const [x, y] = [a[name] as Hook, b[name] as Hook];
    Object.assign(both, {
      [name]: (...args: unknown[]) => {
        x?.(...args);
        y?.(...args);
      },
    });
  }
  return both;
}

/** Builds an index over the first `lines` demo-corpus sentences and opens it. */
export async function startTestService(
  lines = 200,
  reranker = HAS_RERANKER,
  options: Partial<ServiceOptions> = {},
  build: Partial<BuildOptionsInput> = {},
): Promise<TestService> {
  const dir = mkdtempSync(join(tmpdir(), 'paramine-service-'));
  const index = join(dir, 'index');
  await buildIndex({
    inputs: [demoSlice(dir, lines)],
    out: index,
    model: 'all-minilm-l6-v2',
    quiet: true,
    ...build,
  });
  const metrics = new Metrics();
  const service = await openService({
    index,
    reranker: reranker ? DEFAULT_RERANKER : false,
    ...options,
    hooks: bothHooks(metrics.hooks, options.hooks ?? {}),
  });
  const apps: FastifyInstance[] = [];
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir);
  const jobs = service.openJobs({ dir: join(dir, 'jobs'), dataDir });
  const annotations = service.openAnnotations(join(dir, 'annotations'));
  return {
    dir,
    index,
    service,
    jobs: jobs.manager,
    jobStore: jobs.store,
    annotations,
    metrics,
    dataDir,
    app(options = {}, ctx = {}) {
      const app = buildApp({ service, limits: DEFAULT_LIMITS, metrics, jobs, annotations, ...ctx }, options);
      apps.push(app);
      return app;
    },
    async close() {
      // Jobs pause before the apps that stream their results close.
      await jobs.manager.close();
      for (const a of apps) await a.close();
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

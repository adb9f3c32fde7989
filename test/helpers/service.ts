/** A real small service for route tests: the demo corpus's first verses, the real encoder and reranker. */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildIndex } from '../../src/indexer/build.js';
import { JobManager, JobStore } from '../../src/jobs/index.js';
import { type AppOptions, buildApp } from '../../src/server/app.js';
import { DEFAULT_LIMITS } from '../../src/server/context.js';
import { DEFAULT_RERANKER, type OpenService, openService } from '../../src/server/open.js';
import { jobRoutes } from '../../src/server/routes/jobs.js';
import { demoSlice } from './corpus.js';

export const HAS_RERANKER = existsSync(join('models', DEFAULT_RERANKER, 'config.json'));

export interface TestService {
  dir: string;
  index: string;
  service: OpenService;
  jobs: JobManager;
  jobStore: JobStore;
  /** The data directory job file scopes resolve in. */
  dataDir: string;
  app(options?: AppOptions): FastifyInstance;
  close(): Promise<void>;
}

/** Builds an index over the first `lines` demo-corpus sentences and opens it. */
export async function startTestService(lines = 200, reranker = HAS_RERANKER): Promise<TestService> {
  const dir = mkdtempSync(join(tmpdir(), 'paramine-service-'));
  const index = join(dir, 'index');
  await buildIndex({ inputs: [demoSlice(dir, lines)], out: index, model: 'all-minilm-l6-v2', quiet: true });
  const service = await openService({ index, reranker: reranker ? DEFAULT_RERANKER : false });
  const apps: FastifyInstance[] = [];
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir);
  const jobStore = JobStore.open(join(dir, 'jobs'));
  const jobs = new JobManager(jobStore, service.jobContext(dataDir));
  return {
    dir,
    index,
    service,
    jobs,
    jobStore,
    dataDir,
    app(options = {}) {
      const app = buildApp(
        {
          core: service.core,
          store: service.store,
          limits: DEFAULT_LIMITS,
          metrics: service.metrics,
          indexInfo: () => ({ dir: index, manifest: service.index.manifest }),
          readiness: () => ({ index: true, models: true }),
        },
        { ...options, plugins: [jobRoutes(jobs, jobStore), ...(options.plugins ?? [])] },
      );
      apps.push(app);
      return app;
    },
    async close() {
      await jobs.close();
      for (const a of apps) await a.close();
      await jobStore.close();
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `paramine serve`: the HTTP service over one index, with graceful shutdown. */

import { join } from 'node:path';
import type { Command } from 'commander';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import type { JobRunner } from '../jobs/index.js';
import { openService } from '../service/index.js';
import { parseInput } from '../validate.js';
import { buildApp } from './app.js';
import { DEFAULT_LIMITS } from './context.js';
import { loadApiKeys } from './keys.js';
import { Metrics } from './metrics.js';

const optionsSchema = z.object({
  index: z.string().min(1),
  model: z.string().optional(),
  reranker: z.union([z.string(), z.literal(false)]).optional(),
  host: z.string().default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(8080),
  apiKey: z.array(z.string()).default([]),
  apiKeysFile: z.string().min(1).optional(),
  authAll: z.boolean().default(false),
  batchMax: z.coerce.number().int().min(1).max(1024).default(32),
  batchWaitMs: z.coerce.number().min(0).max(1000).default(2),
  queueMax: z.coerce.number().int().min(1).default(512),
  rerankBatchMax: z.coerce.number().int().min(1).max(1024).default(64),
  rerankQueueMax: z.coerce.number().int().min(1).default(1024),
  timeoutMs: z.coerce.number().int().min(100).default(30_000),
  /** undefined: memory-mapped when the shard files are large (ShardedIndex's 'auto'). */
  mmap: z.boolean().optional(),
  verify: z.enum(['auto', 'full', 'sampled', 'off']).default('auto'),
  ortSpin: z.boolean().default(false),
  jobsDir: z.string().min(1).optional(),
  annotationsDir: z.string().min(1).optional(),
  dataDir: z.string().min(1).optional(),
  maxJobs: z.coerce.number().int().min(1).max(64).default(1),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** How much longer than the request timeout a graceful shutdown may take. */
const SHUTDOWN_GRACE_MS = 5000;

/** What another front end adds to `serve` (cli.ts joins them): options, and a runner for mining jobs. */
export interface ServeExtension {
  options(cmd: Command): void;
  /** The runner of POST /v1/jobs for these command-line options (undefined: jobs run in this process). */
  jobRunner(raw: Record<string, unknown>, index: string): JobRunner | undefined;
}

export function register(program: Command, extension?: ServeExtension): void {
  const cmd = program
    .command('serve')
    .description('serve top-k paraphrase search, reranking and classification over HTTP')
    .requiredOption('--index <dir>', 'index directory built by `paramine index`')
    .option('--model <name|dir>', 'encoder (default: the one the index was built with)')
    .option('--reranker <name|dir>', 'cross-encoder (default: paramine-paraphrase-minilm when present)')
    .option('--no-reranker', 'serve without a cross-encoder')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--port <port>', 'port', '8080')
    .option(
      '--api-keys-file <file>',
      'named Bearer keys for write routes, one name:key a line (env PARAMINE_API_KEYS="name:key,..." too)',
    )
    .option(
      '--api-key <key...>',
      'a Bearer key on the command line: visible to every user in `ps`; prefer the above',
    )
    .option('--auth-all', 'require the key on every route but /healthz and /readyz', false)
    .option('--batch-max <n>', 'most texts per encoder call (dynamic batching)', '32')
    .option('--batch-wait-ms <ms>', 'longest wait to fill a batch; 0 turns batching off', '2')
    .option(
      '--queue-max <n>',
      'most texts waiting for the encoder; beyond, requests get 503 + Retry-After',
      '512',
    )
    .option('--rerank-batch-max <n>', 'most pairs per cross-encoder call (dynamic batching)', '64')
    .option(
      '--rerank-queue-max <n>',
      'most pairs waiting for the cross-encoder; beyond, 503 + Retry-After',
      '1024',
    )
    .option('--timeout-ms <ms>', 'request timeout', '30000')
    .option('--mmap', 'map the shards instead of reading them into memory (default: when they are large)')
    .option('--no-mmap', 'read the shards into memory whatever their size')
    .option(
      '--verify <mode>',
      'check the index files against the manifest: auto (every byte under 2 GiB, else size + sampled blocks), full, sampled, off',
      'auto',
    )
    .option(
      '--ort-spin',
      "ONNX Runtime's idle threads spin-wait (off: the encoder's and the reranker's threads share the cores)",
      false,
    )
    .option('--jobs-dir <dir>', 'where mining jobs persist (default: INDEX/jobs)')
    .option(
      '--annotations-dir <dir>',
      "where the web page's pair annotations persist (default: INDEX/annotations)",
    )
    .option('--data-dir <dir>', 'directory job scopes may name files in (none: file scopes are refused)')
    .option('--max-jobs <n>', 'mining jobs running at once (more wait in a queue)', '1')
    .option('--log-level <level>', 'pino log level', 'info')
    .action((raw: Record<string, unknown>) => {
      const o = parseInput(optionsSchema, raw, 'options');
      return serve(o, extension?.jobRunner(raw, o.index));
    });
  extension?.options(cmd);
}

/** Opens the service, builds the app, resumes unfinished jobs and listens until SIGTERM / SIGINT. */
async function serve(o: z.output<typeof optionsSchema>, runner?: JobRunner): Promise<void> {
  const keys = loadApiKeys({
    file: o.apiKeysFile,
    named: process.env.PARAMINE_API_KEYS,
    single: process.env.PARAMINE_API_KEY,
    argv: o.apiKey,
  });
  const metrics = new Metrics();
  const service = await openService({
    index: o.index,
    model: o.model,
    reranker: o.reranker,
    batch: { maxBatch: o.batchMax, maxWaitMs: o.batchWaitMs, maxQueue: o.queueMax },
    rerankBatch: { maxBatch: o.rerankBatchMax, maxWaitMs: o.batchWaitMs, maxQueue: o.rerankQueueMax },
    mmap: o.mmap,
    verify: o.verify,
    spinning: o.ortSpin,
    hooks: metrics.hooks,
  });
  let shuttingDown = false;
  let log: FastifyBaseLogger | undefined;
  const jobs = service.openJobs({
    dir: o.jobsDir ?? join(o.index, 'jobs'),
    dataDir: o.dataDir,
    maxConcurrent: o.maxJobs,
    runner,
    onError: (job, e) => log?.error({ job: job.id, err: e }, 'mining job failed'),
  });
  const annotations = service.openAnnotations(o.annotationsDir ?? join(o.index, 'annotations'));
  const app = buildApp(
    {
      service,
      limits: DEFAULT_LIMITS,
      metrics,
      jobs,
      annotations,
      readiness: () => ({ serving: !shuttingDown }),
    },
    { auth: { keys, protectAll: o.authAll }, requestTimeoutMs: o.timeoutMs, logger: { level: o.logLevel } },
  );
  log = app.log;
  if (o.apiKey.length > 0) {
    app.log.warn('--api-key puts the key on the command line, where `ps` shows it; use --api-keys-file');
  }
  const resumed = jobs.manager.resume();
  if (resumed.length > 0) app.log.info({ jobs: resumed.map((j) => j.id) }, 'resuming mining jobs');
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    app.log.info({ signal }, 'shutting down: draining in-flight requests');
    // Bounded: a request or job batch that will not end does not keep the process alive forever
    // (committed job batches are safe either way; the next start resumes after them).
    setTimeout(() => {
      app.log.error({ afterMs: o.timeoutMs + SHUTDOWN_GRACE_MS }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, o.timeoutMs + SHUTDOWN_GRACE_MS).unref();
    // Running jobs pause at a batch boundary (committed) and resume on the next start.
    await jobs.manager.close();
    app.log.info('jobs paused at a committed batch');
    // Keep-alive connections that go idle once their response is written are closed as they do (a
    // client that holds one would otherwise keep close() waiting); whatever is still open when the
    // request timeout has passed is cut.
    const idle = setInterval(() => app.server.closeIdleConnections(), 100);
    const cut = setTimeout(() => app.server.closeAllConnections(), o.timeoutMs);
    await app.close();
    clearInterval(idle);
    clearTimeout(cut);
    app.log.info('HTTP server closed');
    await service.close();
    app.log.info('stores, index and models closed');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  await app.listen({ host: o.host, port: o.port });
}

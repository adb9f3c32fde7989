/** `paramine serve`: the HTTP service over one index, with graceful shutdown. */

import { join } from 'node:path';
import type { Command } from 'commander';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import { addSettings, defineSettings, settingsOf, type ValuesOf } from '../config.js';
import { env } from '../env.js';
import type { JobRunner } from '../jobs/index.js';
import { LABEL_MODES } from '../models/ports.js';
import { setModelThreadNice } from '../models/worker.js';
import { buildApp } from '../server/app.js';
import { DEFAULT_LIMITS } from '../server/context.js';
import { loadApiKeys } from '../server/keys.js';
import { Metrics } from '../server/metrics.js';
import {
  DEFAULT_BATCH,
  DEFAULT_RERANKER,
  openService,
  SEAL_AT,
  type ServiceOptions,
} from '../service/index.js';

type WriteEmbedder = NonNullable<ServiceOptions['writeEmbedder']>;

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const B = DEFAULT_BATCH;

/** Every option of `paramine serve`, declared once (src/config.ts builds the flags and `paramine config`). */
export const SERVE_SETTINGS = defineSettings({
  index: {
    schema: z.string().min(1),
    flag: '--index <dir>',
    description: 'index directory built by `paramine index`',
    required: true,
  },
  model: {
    schema: z.string().optional(),
    flag: '--model <name|dir>',
    description: 'encoder (default: the one the index was built with)',
  },
  reranker: {
    schema: z.union([z.string(), z.literal(false)]).optional(),
    flag: '--reranker <name|dir>',
    env: 'PARAMINE_RERANKER',
    description: `cross-encoder (default: ${DEFAULT_RERANKER} when present)`,
  },
  noReranker: {
    schema: z.boolean(),
    flag: '--no-reranker',
    description: 'serve without a cross-encoder',
    negates: 'reranker',
  },
  host: {
    schema: z.string(),
    flag: '--host <host>',
    env: 'PARAMINE_HOST',
    description: 'address to bind',
    default: '127.0.0.1',
  },
  port: {
    schema: int(0, 65535),
    flag: '--port <port>',
    env: 'PARAMINE_PORT',
    description: 'port',
    default: 8080,
  },
  apiKeysFile: {
    schema: z.string().min(1).optional(),
    flag: '--api-keys-file <file>',
    env: 'PARAMINE_API_KEYS_FILE',
    description:
      'named Bearer keys for write routes, one name:key a line (env PARAMINE_API_KEYS="name:key,..." too)',
  },
  apiKey: {
    schema: z.array(z.string()).default([]),
    flag: '--api-key <key...>',
    description: 'a Bearer key on the command line: visible to every user in `ps`; prefer the above',
  },
  authAll: {
    schema: z.boolean().default(false),
    flag: '--auth-all',
    description: 'require the key on every route but /healthz and /readyz',
    default: false,
  },
  batchMax: {
    schema: int(1, 1024),
    flag: '--batch-max <n>',
    description: 'most texts per encoder call (dynamic batching)',
    default: B.encoder.maxBatch,
  },
  batchTokens: {
    schema: int(1),
    flag: '--batch-tokens <n>',
    description: 'most padded tokens (as the tokenizer counts them) per encoder call',
    default: B.encoder.maxBatchTokens,
  },
  batchWaitMs: {
    schema: z.coerce.number().min(0).max(1000),
    flag: '--batch-wait-ms <ms>',
    description: 'longest wait to fill a batch; 0 turns batching off',
    default: B.encoder.maxWaitMs,
  },
  queueMax: {
    schema: int(1),
    flag: '--queue-max <n>',
    description: 'most texts waiting for the encoder; beyond, requests get 503 + Retry-After',
    default: B.encoder.maxQueue,
  },
  waitBudgetMs: {
    schema: z.coerce.number().positive(),
    flag: '--wait-budget-ms <ms>',
    env: 'PARAMINE_WAIT_BUDGET_MS',
    description: 'longest predicted wait for a model a request may face; beyond, 503 + Retry-After at once',
    default: B.encoder.waitBudgetMs,
  },
  refusalPaceMs: {
    schema: z.coerce.number().int().min(0).max(5000),
    flag: '--refusal-pace-ms <ms>',
    description:
      "longest pause before a refused connection's next request is read (50 ms, doubling while refusals continue: clients that retry at once do not flood the event loop); 0: none",
    default: DEFAULT_LIMITS.refusalPaceMs,
  },
  modelNice: {
    schema: z.coerce.number().int().min(0).max(19),
    flag: '--model-nice <n>',
    description:
      'niceness of the model threads (Linux): when inference fills the cores, the event loop still answers first (refusals, health, responses); 0: as the process',
    default: 5,
  },
  rerankBatchMax: {
    schema: int(1, 1024),
    flag: '--rerank-batch-max <n>',
    description: 'most pairs per cross-encoder call (dynamic batching)',
    default: B.reranker.maxBatch,
  },
  rerankBatchTokens: {
    schema: int(1),
    flag: '--rerank-batch-tokens <n>',
    description: 'most padded tokens (as the tokenizer counts them) per cross-encoder call',
    default: B.reranker.maxBatchTokens,
  },
  rerankQueueMax: {
    schema: int(1),
    flag: '--rerank-queue-max <n>',
    description: 'most pairs waiting for the cross-encoder; beyond, 503 + Retry-After',
    default: B.reranker.maxQueue,
  },
  timeoutMs: { schema: int(100), flag: '--timeout-ms <ms>', description: 'request timeout', default: 30_000 },
  /** undefined: memory-mapped when the shard files are large (ShardedIndex's 'auto'). */
  mmap: {
    schema: z.boolean().optional(),
    flag: '--mmap',
    description: 'map the shards instead of reading them into memory (default: when they are large)',
  },
  noMmap: {
    schema: z.boolean(),
    flag: '--no-mmap',
    description: 'read the shards into memory whatever their size',
    negates: 'mmap',
  },
  verify: {
    schema: z.enum(['auto', 'full', 'sampled', 'off']),
    flag: '--verify <mode>',
    description:
      'check the index files against the manifest: auto (every byte under 2 GiB, else size + sampled blocks), full, sampled, off',
    choices: ['auto', 'full', 'sampled', 'off'],
    default: 'auto',
  },
  ortSpin: {
    schema: z.boolean().default(false),
    flag: '--ort-spin',
    description:
      "ONNX Runtime's idle threads spin-wait (off: the encoder's and the reranker's threads share the cores)",
    default: false,
  },
  labelsMode: {
    schema: z.enum(LABEL_MODES),
    flag: '--labels-mode <mode>',
    env: 'PARAMINE_LABELS_MODE',
    description:
      "who labels when a request names no mode: fast (the student), balanced (the teacher where the student is unsure; the band is in the student's config.json), best (the teacher)",
    default: 'balanced',
  },
  rerankWorkers: {
    schema: int(0, 64),
    flag: '--rerank-workers <n>',
    description:
      'cross-encoder worker threads (0: one single-threaded worker per core for an int8 graph scored pair by pair, 234 vs 188-204 pairs/s on 2 cores; else one)',
    default: 0,
  },
  writeThreads: {
    schema: int(0, 64),
    flag: '--write-threads <n>',
    description:
      "embed added sentences (POST /v1/sentences) in an encoder session of their own on this many threads (0: they share the queries' encoder and its queue; 1 keeps search p99 within 1.3-1.5x of idle while adding on 2 cores, docs/updates.md)",
    default: 1,
  },
  sealAt: {
    schema: int(1),
    flag: '--seal-at <n>',
    description:
      "seal added sentences into a segment of the build's kind (IVF-PQ with its trained quantizers) once this many are in the growing exact one",
    default: SEAL_AT,
  },
  jobsDir: {
    schema: z.string().min(1).optional(),
    flag: '--jobs-dir <dir>',
    description: 'where mining jobs persist (default: INDEX/jobs)',
  },
  annotationsDir: {
    schema: z.string().min(1).optional(),
    flag: '--annotations-dir <dir>',
    description: "where the web page's pair annotations persist (default: INDEX/annotations)",
  },
  dataDir: {
    schema: z.string().min(1).optional(),
    flag: '--data-dir <dir>',
    env: 'PARAMINE_DATA_DIR',
    description: 'directory job scopes may name files in (none: file scopes are refused)',
  },
  maxJobs: {
    schema: int(1, 64),
    flag: '--max-jobs <n>',
    description: 'mining jobs running at once (more wait in a queue)',
    default: 1,
  },
  logLevel: {
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    flag: '--log-level <level>',
    env: 'PARAMINE_LOG_LEVEL',
    description: 'pino log level',
    choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
  },
});
type ServeOptions = ValuesOf<typeof SERVE_SETTINGS>;

/** How much longer than the request timeout a graceful shutdown may take. */
const SHUTDOWN_GRACE_MS = 5000;

/** What another front end adds to `serve` (cli.ts joins them): options, and a runner for mining jobs. */
export interface ServeExtension {
  options(cmd: Command): void;
  /** The runner of POST /v1/jobs for these command-line options (undefined: jobs run in this process). */
  jobRunner(raw: Record<string, unknown>, index: string): JobRunner | undefined;
  /** What embeds POST /v1/sentences' texts for these options (undefined: this process does). */
  writeEmbedder(raw: Record<string, unknown>, index: string): Promise<WriteEmbedder | undefined>;
}

export function register(program: Command, extension?: ServeExtension): void {
  const cmd = addSettings(
    program
      .command('serve')
      .description('serve top-k paraphrase search, reranking and classification over HTTP'),
    SERVE_SETTINGS,
  ).action((raw: Record<string, unknown>) => {
    const o = settingsOf(cmd, SERVE_SETTINGS);
    return serve(o, extension?.jobRunner(raw, o.index), () =>
      extension === undefined ? Promise.resolve(undefined) : extension.writeEmbedder(raw, o.index),
    );
  });
  extension?.options(cmd);
}

/** The encoder's and the cross-encoder's batching from the flags. */
function batchOptions(o: ServeOptions) {
  const common = { maxWaitMs: o.batchWaitMs, waitBudgetMs: o.waitBudgetMs };
  return {
    batch: { ...common, maxBatch: o.batchMax, maxQueue: o.queueMax, maxBatchTokens: o.batchTokens },
    rerankBatch: {
      ...common,
      maxBatch: o.rerankBatchMax,
      maxQueue: o.rerankQueueMax,
      maxBatchTokens: o.rerankBatchTokens,
    },
  };
}

/** The service with the flags' settings (its writes embedded through a queue when an extension says so). */
async function openServed(
  o: ServeOptions,
  metrics: Metrics,
  writeEmbedder: () => Promise<WriteEmbedder | undefined>,
  log: () => FastifyBaseLogger | undefined,
) {
  const remote = await writeEmbedder();
  return openService({
    index: o.index,
    model: o.model,
    reranker: o.reranker,
    ...batchOptions(o),
    mmap: o.mmap,
    verify: o.verify,
    spinning: o.ortSpin,
    hooks: {
      ...metrics.hooks,
      onGeneration: (m) =>
        log()?.info({ ntotal: m.ntotal, createdAt: m.createdAt }, 'took up the index a compaction wrote'),
    },
    rerankWorkers: o.rerankWorkers,
    labelsMode: o.labelsMode,
    // The first balanced request would otherwise wait for the teacher to load.
    warmTeacher: true,
    writeThreads: o.writeThreads,
    writeEmbedder: remote,
    // `paramine add` / `delete` and `index --compact` beside the service: taken in within a second.
    seal: {
      sealAt: o.sealAt,
      follow: true,
      onSealError: (e) => log()?.error({ err: e }, 'sealing or taking in added sentences failed'),
    },
  }).catch(async (e) => {
    await remote?.close();
    throw e;
  });
}

/** Opens the service, builds the app, resumes unfinished jobs and listens until SIGTERM / SIGINT. */
async function serve(
  o: ServeOptions,
  runner?: JobRunner,
  writeEmbedder: () => Promise<WriteEmbedder | undefined> = () => Promise.resolve(undefined),
): Promise<void> {
  const keys = loadApiKeys({
    file: o.apiKeysFile,
    named: env('PARAMINE_API_KEYS'),
    single: env('PARAMINE_API_KEY'),
    argv: o.apiKey,
  });
  const metrics = new Metrics();
  setModelThreadNice(o.modelNice);
  let log: FastifyBaseLogger | undefined;
  const service = await openServed(o, metrics, writeEmbedder, () => log);
  let shuttingDown = false;
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
      limits: { ...DEFAULT_LIMITS, refusalPaceMs: o.refusalPaceMs },
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

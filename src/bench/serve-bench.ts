/**
 * End-to-end HTTP latency and throughput of `paramine serve`:
 *
 *   paramine bench serve [--index DIR --duration 10 --concurrency 1,16,64 --json FILE]
 *
 * Starts two services on loopback over the same index, one with dynamic encoder batching on
 * (`--batch-wait-ms 2`) and one with it off (`--batch-wait-ms 0`), and drives POST /v1/search with
 * autocannon at each concurrency, without reranking and with the cross-encoder reranking the top
 * `--candidates` (20). Queries are sentences of the index itself (fetched through GET /v1/sentences/:id,
 * spread over the whole id range), sent round-robin so no two consecutive requests repeat. Cells of the
 * two services are interleaved so drift in background load hits both alike. Without --index it uses
 * indexes/demo, building it from examples/demo-corpus.jsonl when absent.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { type ServeChild, spawnServe } from '../testing/index.js';
import { ensureDemoIndex } from './demo-index.js';
import { defineBenchmark, type Log } from './harness.js';
import { machineInfo } from './machine.js';
import { type Cell, drive, indexInfo, type Mode, sampleQueries, serveMarkdown } from './serve-load.js';

const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));

const serveSchema = z.object({
  index: z.string().min(1).optional(),
  duration: z.coerce.number().positive(),
  concurrency: z.string().transform((s) => s.split(',').map((x) => z.coerce.number().int().min(1).parse(x))),
  candidates: z.coerce.number().int().min(1).max(500),
  k: z.coerce.number().int().min(1).max(100),
  queries: z.coerce.number().int().min(1).max(10_000),
  batchWaitMs: z.coerce.number().positive(),
  warmup: z.coerce.number().min(0),
  /** Extra `paramine serve` flags for both services, space-separated. */
  serveArgs: z.string().transform((s) => s.split(' ').filter(Boolean)),
});
export type ServeOptions = z.output<typeof serveSchema>;

interface Service {
  name: 'on' | 'off';
  batchWaitMs: number;
  server: ServeChild;
}

async function startService(
  o: ServeOptions,
  index: string,
  name: 'on' | 'off',
  batchWaitMs: number,
  jobsDir: string,
) {
  const server = await spawnServe([
    ...[CLI, 'serve', '--index', index, '--batch-wait-ms', String(batchWaitMs)],
    // Two services over one index: each keeps its (unused) job and annotation stores apart (both are locked).
    ...['--jobs-dir', join(jobsDir, name, 'jobs'), '--annotations-dir', join(jobsDir, name, 'annotations')],
    ...['--log-level', 'warn', ...o.serveArgs],
  ]);
  return { name, batchWaitMs, server } satisfies Service;
}

/** Every mode and concurrency on both services, interleaved. */
async function measure(o: ServeOptions, services: Service[], texts: string[], modes: Mode[], log: Log) {
  const cells: Cell[] = [];
  for (const mode of modes) {
    if (o.warmup > 0) for (const s of services) await drive(s.server.url, o, texts, mode, 4, o.warmup);
    for (const concurrency of o.concurrency) {
      for (const s of services) {
        log(`batching ${s.name}, ${mode}, concurrency ${concurrency}: ${o.duration} s`);
        const stats = await drive(s.server.url, o, texts, mode, concurrency, o.duration);
        cells.push({ batching: s.name, batchWaitMs: s.batchWaitMs, ...stats });
      }
    }
  }
  return cells;
}

async function serveBenchmark(o: ServeOptions, log: Log) {
  const index = await ensureDemoIndex(o.index, log);
  const startedAt = new Date().toISOString();
  const loadBefore = loadavg();
  log(`index ${index}; starting two services (batching on: --batch-wait-ms ${o.batchWaitMs}; off: 0)`);
  const services: Service[] = [];
  const jobsDir = mkdtempSync(join(tmpdir(), 'paramine-bench-serve-'));
  try {
    services.push(await startService(o, index, 'on', o.batchWaitMs, jobsDir));
    services.push(await startService(o, index, 'off', 0, jobsDir));
    const url = (services[0] as Service).server.url;
    const info = await indexInfo(url);
    const texts = await sampleQueries(url, info.sentences, o.queries);
    log(`${texts.length} query sentences from the index (${info.sentences} sentences)`);
    const modes: Mode[] = info.reranker ? ['ann', 'rerank'] : ['ann'];
    if (!info.reranker) log('no cross-encoder loaded: the rerank rows are skipped');
    const cells = await measure(o, services, texts, modes, log);
    return {
      benchmark: 'serve',
      startedAt,
      finishedAt: new Date().toISOString(),
      command: `paramine bench serve ${process.argv.slice(4).join(' ')}`.trim(),
      machine: machineInfo(loadBefore),
      index: { dir: index, ...info.index },
      reranker: info.reranker,
      queries: texts.length,
      durationS: o.duration,
      cells,
    };
  } finally {
    for (const s of services) await s.server.stop();
    rmSync(jobsDir, { recursive: true, force: true });
  }
}

export type ServeResult = Awaited<ReturnType<typeof serveBenchmark>>;

export const serve = defineBenchmark({
  name: 'serve',
  description: 'end-to-end HTTP latency and throughput of paramine serve, encoder batching on and off',
  options: (cmd) =>
    cmd
      .option('--index <dir>', 'index to serve (default indexes/demo, built when absent)')
      .option('--duration <s>', 'seconds per cell', '10')
      .option('--concurrency <list>', 'connections, comma-separated', '1,16,64')
      .option('--candidates <n>', 'candidates reranked in the rerank rows', '20')
      .option('--k <n>', 'results per query', '10')
      .option('--queries <n>', 'distinct query sentences taken from the index', '256')
      .option('--batch-wait-ms <ms>', 'the batching service’s --batch-wait-ms', '2')
      .option('--warmup <s>', 'seconds of warm-up per mode and service', '2')
      .option(
        '--serve-args <flags>',
        'extra serve flags for both services (give it as --serve-args=...)',
        '',
      ),
  schema: serveSchema,
  async run(o, log) {
    const result = await serveBenchmark(o, log);
    return { result, markdown: serveMarkdown(result) };
  },
});

/**
 * End-to-end HTTP latency and throughput of `paramine serve`:
 *
 *   npm run bench:serve [-- --index DIR --duration 10 --concurrency 1,16,64 --json FILE]
 *
 * Starts two services on loopback over the same index, one with dynamic encoder batching on
 * (`--batch-wait-ms 2`) and one with it off (`--batch-wait-ms 0`), and drives POST /v1/search with
 * autocannon at each concurrency, without reranking and with the cross-encoder reranking the top
 * `--candidates` (20). Queries are sentences of the index itself (fetched through GET /v1/sentences/:id,
 * spread over the whole id range), sent round-robin so no two consecutive requests repeat. Cells of the
 * two services are interleaved so drift in background load hits both alike. Prints a Markdown table;
 * --json writes the full result. Without --index it uses indexes/demo, building it from
 * examples/demo-corpus.jsonl when absent.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { z } from 'zod';
import { machineInfo } from './machine.js';

const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));
const ROOT = resolve(dirname(CLI), '..');

const { values: raw } = parseArgs({
  options: {
    index: { type: 'string' },
    duration: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '1,16,64' },
    candidates: { type: 'string', default: '20' },
    k: { type: 'string', default: '10' },
    queries: { type: 'string', default: '256' },
    'batch-wait-ms': { type: 'string', default: '2' },
    warmup: { type: 'string', default: '2' },
    'serve-args': { type: 'string', default: '' },
    json: { type: 'string' },
  },
});

const args = z
  .object({
    index: z.string().min(1).optional(),
    duration: z.coerce.number().positive(),
    concurrency: z
      .string()
      .transform((s) => s.split(',').map((x) => z.coerce.number().int().min(1).parse(x))),
    candidates: z.coerce.number().int().min(1).max(500),
    k: z.coerce.number().int().min(1).max(100),
    queries: z.coerce.number().int().min(1).max(10_000),
    'batch-wait-ms': z.coerce.number().positive(),
    warmup: z.coerce.number().min(0),
    /** Extra `paramine serve` flags for both services (e.g. "--ort-spin"; give it as --serve-args=...), space-separated. */
    'serve-args': z.string().transform((s) => s.split(' ').filter(Boolean)),
    json: z.string().optional(),
  })
  .parse(raw);

type Mode = 'ann' | 'rerank';

interface Cell {
  batching: 'on' | 'off';
  batchWaitMs: number;
  mode: Mode;
  /** ANN candidates fetched per query (reranked in rerank mode). */
  candidates: number;
  k: number;
  concurrency: number;
  durationS: number;
  requests: number;
  rps: number;
  latencyMs: { p50: number; p90: number; p99: number; mean: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}

interface Service {
  name: 'on' | 'off';
  batchWaitMs: number;
  port: number;
  child: ChildProcess;
  stderr: string[];
}

const log = (line: string) => process.stderr.write(`bench:serve ${line}\n`);

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      s.close(() => ok(port));
    });
  });
}

function ensureIndex(): string {
  const dir = args.index ?? join(ROOT, 'indexes', 'demo');
  if (existsSync(join(dir, 'manifest.json'))) return dir;
  if (args.index !== undefined) throw new Error(`no index at ${dir} (manifest.json missing)`);
  log(`building the demo index in ${dir}`);
  mkdirSync(dirname(dir), { recursive: true });
  const r = spawnSync(
    process.execPath,
    [
      CLI,
      'index',
      '--input',
      join(ROOT, 'examples', 'demo-corpus.jsonl'),
      '--out',
      dir,
      '--resume',
      '--quiet',
    ],
    { stdio: 'inherit' },
  );
  if (r.status !== 0) throw new Error(`building the demo index failed (exit ${r.status})`);
  return dir;
}

async function startService(index: string, name: 'on' | 'off', batchWaitMs: number): Promise<Service> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      CLI,
      'serve',
      '--index',
      index,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--batch-wait-ms',
      String(batchWaitMs),
      '--log-level',
      'warn',
      ...args['serve-args'],
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const stderr: string[] = [];
  child.stderr?.setEncoding('utf8').on('data', (s: string) => {
    stderr.push(s);
    if (stderr.length > 50) stderr.shift();
  });
  const service: Service = { name, batchWaitMs, port, child, stderr };
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(
        `the service (batching ${name}) exited with ${child.exitCode}: ${stderr.join('').slice(-2000)}`,
      );
    }
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (res.ok) return service;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill('SIGKILL');
  throw new Error(`the service (batching ${name}) was not ready within 180 s`);
}

async function stopService(s: Service): Promise<void> {
  if (s.child.exitCode !== null) return;
  const exited = new Promise<void>((ok) => s.child.once('exit', () => ok()));
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => s.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

const IndexInfo = z.object({
  sentences: z.number().int(),
  manifest: z.object({
    factory: z.string(),
    metric: z.string(),
    ntotal: z.number(),
    shards: z.array(z.unknown()),
    model: z.object({ id: z.string() }),
  }),
});

/** `n` sentences spread evenly over the id range (a fixed stride, so every run asks the same ones). */
async function sampleQueries(
  port: number,
  n: number,
): Promise<{ texts: string[]; info: z.infer<typeof IndexInfo> }> {
  const info = IndexInfo.parse(await (await fetch(`http://127.0.0.1:${port}/v1/index`)).json());
  const total = info.sentences;
  if (total === 0) throw new Error('the index is empty');
  const texts: string[] = [];
  const count = Math.min(n, total);
  for (let i = 0; i < count; i++) {
    const id = Math.floor(((i + 0.5) * total) / count);
    const res = await fetch(`http://127.0.0.1:${port}/v1/sentences/${id}`);
    if (!res.ok) continue;
    texts.push(z.object({ text: z.string() }).parse(await res.json()).text);
  }
  return { texts, info };
}

function bodies(texts: string[], mode: Mode): string[] {
  return texts.map((text) =>
    JSON.stringify(
      mode === 'ann'
        ? { text, k: args.k, rerank: false }
        : { text, k: Math.min(args.k, args.candidates), candidates: args.candidates, rerank: true },
    ),
  );
}

async function load(port: number, payloads: string[], connections: number, duration: number) {
  let next = 0;
  return autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration,
    timeout: 120,
    requests: [
      {
        method: 'POST',
        path: '/v1/search',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => {
          const body = payloads[next++ % payloads.length];
          return { ...req, body };
        },
      },
    ],
  });
}

async function run(): Promise<void> {
  const index = ensureIndex();
  const startedAt = new Date().toISOString();
  const loadBefore = loadavg();
  log(
    `index ${index}; starting two services (batching on: --batch-wait-ms ${args['batch-wait-ms']}; off: 0)`,
  );
  const services: Service[] = [];
  try {
    services.push(await startService(index, 'on', args['batch-wait-ms']));
    services.push(await startService(index, 'off', 0));
    const first = services[0] as Service;
    const { texts, info } = await sampleQueries(first.port, args.queries);
    log(`${texts.length} query sentences from the index (${info.sentences} sentences)`);

    // Is there a cross-encoder? A reranked answer carries labels.
    const probe = await fetch(`http://127.0.0.1:${first.port}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: bodies(texts.slice(0, 1), 'rerank')[0] ?? '{}',
    });
    const probeBody = z
      .object({
        results: z.array(z.object({ candidates: z.array(z.object({ label: z.string().optional() })) })),
      })
      .parse(await probe.json());
    const hasReranker = probeBody.results[0]?.candidates.some((c) => c.label !== undefined) ?? false;
    const modes: Mode[] = hasReranker ? ['ann', 'rerank'] : ['ann'];
    if (!hasReranker) log('no cross-encoder loaded: the rerank rows are skipped');

    const cells: Cell[] = [];
    for (const mode of modes) {
      const payloads = bodies(texts, mode);
      if (args.warmup > 0) {
        for (const s of services) await load(s.port, payloads, 4, args.warmup);
      }
      for (const concurrency of args.concurrency) {
        for (const s of services) {
          log(`batching ${s.name}, ${mode}, concurrency ${concurrency}: ${args.duration} s`);
          const r = await load(s.port, payloads, concurrency, args.duration);
          cells.push({
            batching: s.name,
            batchWaitMs: s.batchWaitMs,
            mode,
            candidates: mode === 'rerank' ? args.candidates : args.k,
            k: mode === 'rerank' ? Math.min(args.k, args.candidates) : args.k,
            concurrency,
            durationS: r.duration,
            requests: r.requests.total,
            rps: r.requests.total / r.duration,
            latencyMs: {
              p50: r.latency.p50,
              p90: r.latency.p90,
              p99: r.latency.p99,
              mean: r.latency.mean,
              max: r.latency.max,
            },
            non2xx: r.non2xx,
            errors: r.errors,
            timeouts: r.timeouts,
          });
        }
      }
    }

    const result = {
      benchmark: 'serve',
      startedAt,
      finishedAt: new Date().toISOString(),
      command: `node dist/bench/serve-bench.js ${process.argv.slice(2).join(' ')}`.trim(),
      machine: machineInfo(loadBefore),
      index: {
        dir: index,
        sentences: info.sentences,
        factory: info.manifest.factory,
        metric: info.manifest.metric,
        shards: info.manifest.shards.length,
        model: info.manifest.model.id,
      },
      reranker: hasReranker,
      queries: texts.length,
      durationS: args.duration,
      cells,
    };
    process.stdout.write(`${markdown(result.cells)}\n`);
    process.stdout.write(
      `\n${result.index.sentences} sentences (${result.index.factory}, ${result.index.shards} shard(s), ${result.index.model}); ` +
        `${texts.length} distinct queries; ${args.duration} s per cell; ${result.machine.cpus} CPUs (${result.machine.cpuModel}); ` +
        `load average ${loadBefore.map((x) => x.toFixed(2)).join(' ')} before, ${result.machine.loadavgAfter.map((x) => x.toFixed(2)).join(' ')} after\n`,
    );
    if (args.json !== undefined) {
      writeFileSync(args.json, `${JSON.stringify(result, null, 2)}\n`);
      log(`wrote ${args.json}`);
    }
  } finally {
    for (const s of services) await stopService(s);
  }
}

function markdown(cells: Cell[]): string {
  const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  const lines = [
    '| search | batching | concurrency | req/s | p50 ms | p90 ms | p99 ms | requests | non-2xx / errors |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const c of cells) {
    const what = c.mode === 'ann' ? `ANN only, k ${c.k}` : `rerank top ${c.candidates}, k ${c.k}`;
    const batching = c.batching === 'on' ? `on (${c.batchWaitMs} ms)` : 'off';
    lines.push(
      `| ${what} | ${batching} | ${c.concurrency} | ${fmt(c.rps)} | ${fmt(c.latencyMs.p50)} | ${fmt(c.latencyMs.p90)} | ${fmt(c.latencyMs.p99)} | ${c.requests} | ${c.non2xx} / ${c.errors} |`,
    );
  }
  return lines.join('\n');
}

run().catch((e: unknown) => {
  process.stderr.write(`bench:serve failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});

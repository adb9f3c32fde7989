/**
 * Writes while serving (issue #30, BENCHMARKS.md "Writes"): against a real `paramine serve` over a copy of
 * the demo index (all-MiniLM-L6-v2, ANN search without rerank), in one invocation:
 *  - the one-shot build's rate on the same machine (`paramine index` over `--build-n` new sentences);
 *  - search latency with `--clients` closed-loop clients, idle, then while one writer adds as fast as the
 *    service takes it (writes of `--batch` sentences): the sustained add rate, and search p50 / p99
 *    beside the idle ones;
 *  - time to visibility: after each write's 200, how long until a search finds one of its sentences.
 *
 *   npm run lab -- writes [--clients 4] [--duration 15] [--batch 64] [--write-threads 1] [--write-queue]
 *
 * `--write-queue`: the writes are embedded by a `paramine worker --stages add` (its own redis-server on a free
 * port) instead of the service (`serve --write-queue`). Here the worker shares the machine's cores: this
 * measures the queue path's cost, not the relief a worker on another machine brings.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ensureDemoIndex } from '../../dist/bench/demo-index.js';
import { defineBenchmark, type Log } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { quantile } from '../../dist/bench/metrics.js';
import { indexInfo, sampleQueries, searchLoad } from '../../dist/bench/serve-load.js';
import { buildIndex } from '../../dist/indexer/build.js';
import { spawnServe } from '../../dist/testing/index.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const KEY = 'writes-bench-key-0001';

const schema = z.object({
  index: z.string().min(1).optional(),
  clients: z.coerce.number().int().min(1),
  duration: z.coerce.number().positive(),
  batch: z.coerce.number().int().min(1).max(1000),
  buildN: z.coerce.number().int().min(100),
  writeThreads: z.coerce.number().int().min(0),
  writeQueue: z.boolean().default(false),
});
type Options = z.output<typeof schema>;

const WORDS = [
  'river',
  'market',
  'engine',
  'letter',
  'garden',
  'doctor',
  'window',
  'station',
  'forest',
  'bridge',
];
/** The n-th new sentence: distinct, plain English. */
const sentence = (n: number) =>
  `Report ${n}: the ${WORDS[n % 10]} near the ${WORDS[Math.floor(n / 10) % 10]} was ${['closed', 'opened', 'moved', 'sold'][Math.floor(n / 100) % 4]} on day ${Math.floor(n / 400)}.`;

const stats = (ms: number[]) => ({ n: ms.length, p50: quantile(ms, 0.5), p99: quantile(ms, 0.99) });

async function buildRate(o: Options, dir: string): Promise<number> {
  const input = join(dir, 'build.txt');
  writeFileSync(
    input,
    `${Array.from({ length: o.buildN }, (_, i) => sentence(10_000_000 + i)).join('\n')}\n`,
  );
  const t0 = performance.now();
  await buildIndex({ inputs: [input], out: join(dir, 'built'), model: 'all-minilm-l6-v2', quiet: true });
  return o.buildN / ((performance.now() - t0) / 1000);
}

/** One writer as fast as the service answers, each write followed by a search for one of its sentences. */
async function writer(url: string, o: Options, until: number) {
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  const visible: number[] = [];
  let added = 0;
  let n = 0;
  const t0 = performance.now();
  while (performance.now() < until) {
    const texts = Array.from({ length: o.batch }, () => sentence(n++));
    const res = await fetch(`${url}/v1/sentences`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ sentences: texts.map((text) => ({ text })) }),
    });
    if (res.status !== 200) throw new Error(`add: ${res.status} ${await res.text()}`);
    const acked = performance.now();
    const body = (await res.json()) as { sentences: Array<{ id: number; status: string }> };
    added += body.sentences.filter((s) => s.status === 'added').length;
    const probe = body.sentences.length - 1;
    const want = body.sentences[probe]?.id;
    for (;;) {
      const s = await fetch(`${url}/v1/search`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ text: texts[probe], k: 5, rerank: false, excludeDuplicates: false }),
      });
      const found = ((await s.json()) as { results: Array<{ candidates: Array<{ id: number }> }> })
        .results[0];
      if (found?.candidates.some((c) => c.id === want)) break;
    }
    visible.push(performance.now() - acked);
  }
  return { added, seconds: (performance.now() - t0) / 1000, visible };
}

/** A redis-server on a free loopback port and one `paramine worker --stages add` on it. */
async function startQueue(log: Log): Promise<{ url: string; stop(): void }> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  const url = `redis://127.0.0.1:${port}/0`;
  const children: ChildProcess[] = [
    spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    ),
  ];
  await new Promise((ok) => setTimeout(ok, 500));
  const worker = spawn(
    process.execPath,
    [CLI, 'worker', '--queue', url, '--stages', 'add', '--threads', '1'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  children.push(worker);
  await new Promise<void>((ok, fail) => {
    let text = '';
    worker.stderr?.on('data', (d: Buffer) => {
      text += d.toString();
      if (/stages add/.test(text)) ok();
    });
    worker.once('exit', (code) => fail(new Error(`worker exited (${code}): ${text}`)));
  });
  log(`write queue ${url}: one paramine worker (1 thread)`);
  return {
    url,
    stop: () => {
      for (const c of children.reverse()) c.kill('SIGKILL');
    },
  };
}

async function run(o: Options, log: Log) {
  const loadBefore = loadavg();
  const demo = await ensureDemoIndex(o.index, log);
  const dir = mkdtempSync(join(tmpdir(), 'paramine-writes-bench-'));
  try {
    log(`the one-shot build's rate: ${o.buildN} sentences`);
    const built = await buildRate(o, dir);
    const index = join(dir, 'index');
    cpSync(demo, index, { recursive: true });
    writeFileSync(join(dir, 'keys.txt'), `bench:${KEY}\n`);
    const queue = o.writeQueue ? await startQueue(log) : undefined;
    const server = await spawnServe([
      CLI,
      'serve',
      '--index',
      index,
      '--no-reranker',
      '--log-level',
      'warn',
      '--api-keys-file',
      join(dir, 'keys.txt'),
      '--write-threads',
      String(o.writeThreads),
      ...(queue ? ['--write-queue', queue.url] : []),
    ]).catch((e) => {
      queue?.stop();
      throw e;
    });
    try {
      const info = await indexInfo(server.url);
      const bodies = (await sampleQueries(server.url, info.sentences, 256)).map((text) =>
        JSON.stringify({ text, k: 10, rerank: false }),
      );
      const searchOf = async (during?: () => Promise<unknown>) => {
        const ms: number[] = [];
        const [r] = await Promise.all([
          searchLoad(server.url, bodies, o.clients, o.duration, (status, t) => status === 200 && ms.push(t)),
          during?.(),
        ]);
        return { ...stats(ms), errors: r.errors, non2xx: r.non2xx };
      };
      log(`idle: ${o.clients} search clients, ${o.duration} s`);
      await searchOf(); // warm-up
      const idle = await searchOf();
      log(`adding: the same clients and one writer, ${o.duration} s`);
      let adds: Awaited<ReturnType<typeof writer>> | undefined;
      const busy = await searchOf(async () => {
        adds = await writer(server.url, o, performance.now() + o.duration * 1000);
      });
      const a = adds as Awaited<ReturnType<typeof writer>>;
      return {
        benchmark: 'writes',
        machine: machineInfo(loadBefore),
        options: o,
        buildRate: built,
        addRate: a.added / a.seconds,
        added: a.added,
        search: { idle, adding: busy, p99Ratio: busy.p99 / idle.p99 },
        visibility: stats(a.visible),
      };
    } finally {
      await server.stop();
      queue?.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Result = Awaited<ReturnType<typeof run>>;

function markdown(r: Result): string {
  const f = (x: number) => x.toFixed(1);
  return [
    `| what | figure | beside it |`,
    '|---|---:|---|',
    `| sustained add rate (writes of ${r.options.batch}, one writer, ${r.options.clients} search clients running) | ${f(r.addRate)} sentences/s | the one-shot build: ${f(r.buildRate)} sentences/s (${f((100 * r.addRate) / r.buildRate)}%) |`,
    `| search p50 / p99 while adding | ${f(r.search.adding.p50)} / ${f(r.search.adding.p99)} ms | idle: ${f(r.search.idle.p50)} / ${f(r.search.idle.p99)} ms (p99 ×${r.search.p99Ratio.toFixed(2)}) |`,
    `| time to visibility after the 200, p50 / p99 (${r.visibility.n} writes) | ${f(r.visibility.p50)} / ${f(r.visibility.p99)} ms | aim: p99 ≤ 1,000 ms |`,
    '',
  ].join('\n');
}

export const writesBench = defineBenchmark({
  name: 'writes',
  description: 'writes while serving: add rate vs the build, search latency while adding vs idle, visibility',
  options: (cmd) =>
    cmd
      .option('--index <dir>', 'index to copy and write into (default: the demo index)')
      .option('--clients <n>', 'closed-loop search clients', '4')
      .option('--duration <s>', 'seconds a phase', '15')
      .option('--batch <n>', 'sentences a write', '64')
      .option('--build-n <n>', 'sentences of the one-shot build whose rate is the reference', '5000')
      .option(
        '--write-threads <n>',
        "the service's --write-threads (0: writes share the queries' encoder)",
        '0',
      )
      .option('--write-queue', 'writes embedded by a paramine worker through a queue (serve --write-queue)'),
  schema,
  run: async (o, log) => {
    const r = await run(o, log);
    return { result: r, markdown: markdown(r) };
  },
});

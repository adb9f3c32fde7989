/**
 * A steady-rate soak of a real `paramine serve` child on loopback:
 *
 *   npm run lab -- soak --minutes 30 --rate 4 [--index DIR] [--interval-s 60] [--json FILE]
 *
 * Open loop: a request leaves every 1/rate seconds whatever the service does, cycling search (ANN),
 * search + rerank (when a cross-encoder is loaded) and classify, with query sentences taken from the
 * index. A mining job runs in the background the whole time (a new one starts when the last finishes).
 * Bounded in count and time: at most --max-in-flight requests are outstanding (a send beyond it counts
 * as an error: the client fell behind), each request times out after 30 s. Every interval reports p50,
 * p99, errors and the child's RSS; the verdict compares the first and last third of the intervals after
 * warm-up (p99 drift, RSS growth).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ensureDemoIndex } from '../../dist/bench/demo-index.js';
import { defineBenchmark, type Log } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { quantile } from '../../dist/bench/metrics.js';
import { spawnServe } from '../../dist/testing/index.js';
import { statusKiB } from './proc-status.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

const soakSchema = z.object({
  index: z.string().min(1).optional(),
  minutes: z.coerce
    .number()
    .positive()
    .max(24 * 60),
  rate: z.coerce.number().positive().max(1000),
  intervalS: z.coerce.number().positive().max(3600),
  warmupIntervals: z.coerce.number().int().min(0),
  maxInFlight: z.coerce.number().int().min(1).max(10_000),
  job: z.boolean(),
});
export type SoakOptions = z.output<typeof soakSchema>;

const JOB_PAUSE_MS = 5000;

type Kind = 'search' | 'rerank' | 'classify';

export interface SoakInterval {
  /** Seconds since the start, at the interval's end. */
  t: number;
  requests: number;
  errors: number;
  p50: number;
  p99: number;
  rssMB: number;
  /** Anonymous memory (heaps, native allocations): what a leak grows. */
  anonMB: number;
  /** File-backed pages (LMDB maps, model files, shards): grows with stored job results, not a leak. */
  fileMB: number;
  jobsDone: number;
}

function memory(pid: number): { rssMB: number; anonMB: number; fileMB: number } {
  const kib = statusKiB(['VmRSS', 'RssAnon', 'RssFile', 'RssShmem'], pid);
  if (kib === undefined) throw new Error(`/proc/${pid}/status cannot be read: the soak needs Linux`);
  const [rss = 0, anon = 0, file = 0, shmem = 0] = kib;
  return { rssMB: rss / 1024, anonMB: anon / 1024, fileMB: (file + shmem) / 1024 };
}

async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return res.json();
}

/** Query sentences: `n` spread over the index. */
async function queries(url: string, n: number): Promise<string[]> {
  const info = z.object({ sentences: z.number().int() }).parse(await getJson(`${url}/v1/index`));
  const out: string[] = [];
  for (let i = 0; i < Math.min(n, info.sentences); i++) {
    const id = Math.floor(((i + 0.5) * info.sentences) / Math.min(n, info.sentences));
    out.push(z.object({ text: z.string() }).parse(await getJson(`${url}/v1/sentences/${id}`)).text);
  }
  return out;
}

function request(kind: Kind, texts: string[], i: number): { path: string; body: unknown } {
  const a = texts[i % texts.length] as string;
  const b = texts[(i * 7 + 3) % texts.length] as string;
  if (kind === 'classify') return { path: '/v1/classify', body: { pairs: [[a, b]] } };
  return {
    path: '/v1/search',
    body:
      kind === 'search' ? { text: a, k: 10, rerank: false } : { text: a, k: 5, candidates: 20, rerank: true },
  };
}

/** Keeps one mining job running; counts those that ended `done`, and any other end as an error. */
function backgroundJobs(url: string, stop: AbortSignal, onError: (what: string) => void) {
  const state = { done: 0 };
  const loop = async () => {
    while (!stop.aborted) {
      const res = await fetch(`${url}/v1/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ k: 5, minCosine: 0.8 }),
      });
      if (res.status !== 202) {
        onError(`job start: ${res.status}`);
        await new Promise((r) => setTimeout(r, 2000));
        continue;
      }
      const { id } = z.object({ id: z.string() }).parse(await res.json());
      for (;;) {
        await new Promise((r) => setTimeout(r, 1000));
        const job = z.object({ state: z.string() }).parse(await getJson(`${url}/v1/jobs/${id}`));
        if (job.state === 'done') state.done++;
        else if (job.state === 'failed' || job.state === 'cancelled') onError(`job ${job.state}`);
        else if (!stop.aborted) continue;
        break;
      }
      // A pause between jobs, so the requests are measured both beside a job and without one.
      await new Promise((r) => setTimeout(r, JOB_PAUSE_MS));
    }
  };
  const done = loop().catch((e: unknown) => onError(`job loop: ${(e as Error).message}`));
  return { state, done };
}

/** Sends at the rate for the whole run; returns the per-interval rows. */
async function drive(o: SoakOptions, url: string, pid: number, kinds: Kind[], texts: string[], log: Log) {
  const rows: SoakInterval[] = [];
  const stop = new AbortController();
  let bucket: { lat: number[]; errors: number } = { lat: [], errors: 0 };
  const errorKinds = new Map<string, number>();
  const fail = (what: string) => {
    bucket.errors++;
    errorKinds.set(what, (errorKinds.get(what) ?? 0) + 1);
  };
  const jobs = o.job
    ? backgroundJobs(url, stop.signal, fail)
    : { state: { done: 0 }, done: Promise.resolve() };
  const start = performance.now();
  const end = start + o.minutes * 60_000;
  let nextRow = start + o.intervalS * 1000;
  let inFlight = 0;
  const pending = new Set<Promise<void>>();
  /** Closes every interval that has ended by `now` into a row. */
  const flushRows = (now: number) => {
    while (now >= nextRow) {
      const row = {
        t: Math.round((nextRow - start) / 1000),
        requests: bucket.lat.length,
        errors: bucket.errors,
      };
      rows.push({
        ...row,
        p50: quantile(bucket.lat, 0.5),
        p99: quantile(bucket.lat, 0.99),
        ...memory(pid),
        jobsDone: jobs.state.done,
      });
      log(`${JSON.stringify(rows.at(-1))}`);
      bucket = { lat: [], errors: 0 };
      nextRow += o.intervalS * 1000;
    }
  };
  for (let i = 0; performance.now() < end; i++) {
    const due = start + (i * 1000) / o.rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    flushRows(performance.now());
    if (inFlight >= o.maxInFlight) {
      fail('client fell behind (max in flight)');
      continue;
    }
    const { path, body } = request(kinds[i % kinds.length] as Kind, texts, i);
    const mine = bucket;
    const t0 = performance.now();
    inFlight++;
    const p = fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    })
      .then(async (res) => {
        await res.arrayBuffer();
        if (res.ok) mine.lat.push(performance.now() - t0);
        else fail(`${path} ${res.status}`);
      })
      .catch((e: unknown) => fail(`${path} ${(e as Error).name}`))
      .finally(() => {
        inFlight--;
        pending.delete(p);
      });
    pending.add(p);
  }
  stop.abort();
  await Promise.all([...pending, jobs.done]);
  // The last interval ends with the run: close it even when the loop's final wake-up came late
  // (the 1 ms absorbs rounding in nextRow's sums; no interval past the end is opened).
  flushRows(end + 1);
  return { rows, errorKinds: Object.fromEntries(errorKinds), jobsDone: jobs.state.done };
}

/** p99 drift and RSS growth: last third of the post-warm-up intervals against the first third. */
export function verdict(rows: readonly SoakInterval[], warmup: number) {
  const steady = rows.slice(Math.min(warmup, Math.max(0, rows.length - 2)));
  const third = Math.max(1, Math.floor(steady.length / 3));
  const median = (xs: number[]) => quantile(xs, 0.5);
  const first = steady.slice(0, third);
  const last = steady.slice(-third);
  const p99First = median(first.map((r) => r.p99));
  const p99Last = median(last.map((r) => r.p99));
  const rssFirst = first[0]?.rssMB ?? 0;
  const rssLast = last.at(-1)?.rssMB ?? 0;
  const anonFirst = first[0]?.anonMB ?? 0;
  const anonLast = last.at(-1)?.anonMB ?? 0;
  return {
    errors: rows.reduce((n, r) => n + r.errors, 0),
    requests: rows.reduce((n, r) => n + r.requests, 0),
    p99Drift: p99First > 0 ? p99Last / p99First - 1 : 0,
    rssGrowth: rssFirst > 0 ? rssLast / rssFirst - 1 : 0,
    anonGrowth: anonFirst > 0 ? anonLast / anonFirst - 1 : 0,
  };
}

async function soak(o: SoakOptions, log: Log) {
  const index = await ensureDemoIndex(o.index, log);
  const loadBefore = loadavg();
  // Its own jobs directory: the soak's background jobs neither pile up beside the index nor collide with
  // a service already running on it (one process per jobs directory).
  const jobsDir = mkdtempSync(join(tmpdir(), 'paramine-soak-jobs-'));
  const server = await spawnServe([
    CLI,
    'serve',
    '--index',
    index,
    '--jobs-dir',
    jobsDir,
    '--log-level',
    'warn',
  ]);
  try {
    const url = server.url;
    const texts = await queries(url, 200);
    const probe = await fetch(`${url}/v1/classify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pairs: [[texts[0], texts[1]]] }),
    });
    const kinds: Kind[] = probe.ok ? ['search', 'rerank', 'classify'] : ['search'];
    if (!probe.ok) log('no cross-encoder: search only');
    log(`${o.minutes} min at ${o.rate} req/s (${kinds.join(', ')}), a mining job: ${o.job}`);
    const run = await drive(o, url, server.child.pid as number, kinds, texts, log);
    return {
      benchmark: 'soak',
      command: `npm run lab -- soak ${process.argv.slice(4).join(' ')}`.trim(),
      machine: machineInfo(loadBefore),
      index,
      options: o,
      kinds,
      ...run,
      verdict: verdict(run.rows, o.warmupIntervals),
    };
  } finally {
    await server.stop();
    rmSync(jobsDir, { recursive: true, force: true });
  }
}

export type SoakResult = Awaited<ReturnType<typeof soak>>;

export function soakMarkdown(r: SoakResult): string {
  const f = (x: number) => x.toFixed(x >= 100 ? 0 : 1);
  const lines = [
    '| t (s) | requests | errors | p50 ms | p99 ms | RSS MB | anon MB | file MB | jobs done |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...r.rows.map(
      (x) =>
        `| ${x.t} | ${x.requests} | ${x.errors} | ${f(x.p50)} | ${f(x.p99)} | ${f(x.rssMB)} | ${f(x.anonMB)} | ${f(x.fileMB)} | ${x.jobsDone} |`,
    ),
  ];
  const v = r.verdict;
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  lines.push(
    '',
    `${v.requests} requests, ${v.errors} errors${v.errors ? ` (${JSON.stringify(r.errorKinds)})` : ''}; ` +
      `p99 drift ${pct(v.p99Drift)}, RSS growth ${pct(v.rssGrowth)} (anonymous ${pct(v.anonGrowth)}) after ${r.options.warmupIntervals} warm-up interval(s); ` +
      `${r.jobsDone} mining jobs done; ${r.machine.cpus} CPUs, load ${r.machine.loadavgBefore.map((x) => x.toFixed(2)).join(' ')} before, ` +
      `${r.machine.loadavgAfter.map((x) => x.toFixed(2)).join(' ')} after`,
  );
  return `${lines.join('\n')}\n`;
}

export const soakBench = defineBenchmark({
  name: 'soak',
  description:
    'steady-rate soak of paramine serve: per-interval p50/p99, errors, RSS; a mining job alongside',
  options: (cmd) =>
    cmd
      .option('--index <dir>', 'index to serve (default indexes/demo, built when absent)')
      .option('--minutes <m>', 'how long', '30')
      .option('--rate <r>', 'requests per second (open loop)', '4')
      .option('--interval-s <s>', 'seconds per reported row', '60')
      .option('--warmup-intervals <n>', 'rows left out of the drift and growth figures', '2')
      .option('--max-in-flight <n>', 'outstanding requests at most (beyond: counted as errors)', '64')
      .option('--no-job', 'no mining job in the background'),
  schema: soakSchema,
  async run(o, log) {
    const result = await soak(o, log);
    return { result, markdown: soakMarkdown(result) };
  },
});

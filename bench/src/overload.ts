/**
 * Shedding under overload: far more concurrent clients than 2 cores can serve with rerank, closed loop
 * (each client sends again when answered), against one `paramine serve` per admission setting, in one
 * invocation. Reports admitted (200) and refused (503) requests separately: how many, and their latency
 * percentiles. The aim (issue 29): refusals answer at once (p99 <= 0.5 s) and admitted requests finish
 * (p99 <= 3 s), where admission by queue length alone let 500 clients wait 7-9 s.
 *
 *   npm run lab -- overload [--index DIR] [--clients 500] [--duration 15] [--budgets 1000,off]
 *
 * `off` is admission by count only (a budget no request reaches), the behaviour before predicted-wait
 * admission; the count bounds (--queue-max, --rerank-queue-max) are the service defaults in every run.
 */
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ensureDemoIndex } from '../../dist/bench/demo-index.js';
import { defineBenchmark, type Log, list } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { quantile } from '../../dist/bench/metrics.js';
import { indexInfo, sampleQueries, searchLoad } from '../../dist/bench/serve-load.js';
import { spawnServe } from '../../dist/testing/index.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
/** "off": a budget no request reaches, so only the count bounds refuse. */
const OFF_MS = 1e9;

const schema = z.object({
  index: z.string().min(1).optional(),
  clients: z.coerce.number().int().min(1),
  duration: z.coerce.number().positive(),
  candidates: z.coerce.number().int().min(1).max(500),
  budgets: z
    .string()
    .transform((s) => list(s).map((b) => (b === 'off' ? 'off' : z.coerce.number().positive().parse(b)))),
  warmup: z.coerce.number().min(0),
});
type Options = z.output<typeof schema>;

const stats = (ms: number[]) => ({
  n: ms.length,
  p50: quantile(ms, 0.5),
  p90: quantile(ms, 0.9),
  p99: quantile(ms, 0.99),
  max: ms.length ? Math.max(...ms) : 0,
});

/** Closed-loop load; every answer's status and latency. */
async function load(url: string, texts: string[], o: Options, clients: number, duration: number) {
  const bodies = texts.map((text) => JSON.stringify({ text, k: 10, candidates: o.candidates }));
  const byStatus = new Map<number, number[]>();
  const r = await searchLoad(url, bodies, clients, duration, (status, ms) => {
    const l = byStatus.get(status) ?? [];
    l.push(ms);
    byStatus.set(status, l);
  });
  return { durationS: r.duration, errors: r.errors, timeouts: r.timeouts, byStatus };
}

async function run(o: Options, log: Log) {
  const index = await ensureDemoIndex(o.index, log);
  const loadBefore = loadavg();
  const rows = [];
  for (const budget of o.budgets) {
    const ms = budget === 'off' ? OFF_MS : budget;
    log(`--wait-budget-ms ${budget}: ${o.clients} clients, ${o.duration} s`);
    const server = await spawnServe([
      CLI,
      'serve',
      '--index',
      index,
      '--log-level',
      'warn',
      '--wait-budget-ms',
      String(ms),
      // The baseline is the service as it was before shedding by wait: no pacing, models at the process's priority.
      ...(budget === 'off' ? ['--refusal-pace-ms', '0', '--model-nice', '0'] : []),
    ]);
    try {
      const info = await indexInfo(server.url);
      if (!info.reranker) throw new Error('no cross-encoder loaded: the overload run needs rerank');
      const texts = await sampleQueries(server.url, info.sentences, 256);
      if (o.warmup > 0) await load(server.url, texts, o, 4, o.warmup);
      const r = await load(server.url, texts, o, o.clients, o.duration);
      const other = [...r.byStatus.entries()].filter(([s]) => s !== 200 && s !== 503);
      rows.push({
        budget,
        durationS: r.durationS,
        admitted: stats(r.byStatus.get(200) ?? []),
        refused: stats(r.byStatus.get(503) ?? []),
        other: Object.fromEntries(other.map(([s, l]) => [s, l.length])),
        errors: r.errors,
        timeouts: r.timeouts,
      });
    } finally {
      await server.stop();
    }
  }
  return {
    benchmark: 'overload',
    command: `npm run lab -- overload ${process.argv.slice(4).join(' ')}`.trim(),
    machine: machineInfo(loadBefore),
    index,
    clients: o.clients,
    candidates: o.candidates,
    rows,
  };
}

type Result = Awaited<ReturnType<typeof run>>;

function markdown(r: Result): string {
  const s = (x: number) => (x / 1000).toFixed(2);
  const lines = [
    `${r.clients} closed-loop clients, rerank@${r.candidates}, ${r.rows[0]?.durationS ?? 0} s a row`,
    '',
    '| wait budget | admitted (200) | p50 / p99 s | refused (503) | p50 / p99 s | other |',
    '|---|---:|---|---:|---|---|',
    ...r.rows.map(
      (w) =>
        `| ${w.budget === 'off' ? 'off (count only)' : `${w.budget} ms`} | ${w.admitted.n} | ${s(w.admitted.p50)} / ${s(w.admitted.p99)} | ` +
        `${w.refused.n} | ${s(w.refused.p50)} / ${s(w.refused.p99)} | ${JSON.stringify(w.other)}, errors ${w.errors} |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}

export const overload = defineBenchmark({
  name: 'overload',
  description: 'admitted vs refused requests under far more clients than the cores serve (shedding)',
  options: (cmd) =>
    cmd
      .option('--index <dir>', 'index to serve (default indexes/demo, built when absent)')
      .option('--clients <n>', 'closed-loop clients', '500')
      .option('--duration <s>', 'seconds per setting', '15')
      .option('--candidates <n>', 'candidates reranked per request', '20')
      .option('--budgets <list>', "--wait-budget-ms values to compare ('off': by count only)", '500,off')
      .option('--warmup <s>', 'seconds of light load first', '3'),
  schema,
  async run(o, log) {
    const result = await run(o, log);
    return { result, markdown: markdown(result) };
  },
});

/**
 * Shedding under overload: far more concurrent clients than 2 cores can serve with rerank, closed loop,
 * against one `paramine serve` per admission setting, in one invocation. Each server is measured three ways:
 * a few clients (the reference: what the cores serve unhurried), then many impatient clients (autocannon:
 * the next request the moment one is answered, 503s included, Retry-After ignored), then (--patient) as many
 * clients that wait the Retry-After they are given. Reports admitted (200) and refused (503) requests: how
 * many, their latency percentiles, and goodput (admitted per second over the reference's). The aims
 * (issues 29, 51): refusals p99 <= 0.5 s, admitted p99 <= 3 s, goodput >= 70% of the reference.
 *
 *   npm run lab -- overload [--index DIR] [--clients 500] [--duration 15] [--budgets 500,off] [--patient]
 *     [--pace-ms MS]
 *
 * `off` is admission by count only (a budget no request reaches), no refusal pacing and the models at the
 * process's priority: the behaviour before predicted-wait admission; the count bounds (--queue-max,
 * --rerank-queue-max) are the service defaults in every run.
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
import { patientLoad } from './patient-load.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
/** "off": a budget no request reaches, so only the count bounds refuse. */
const OFF_MS = 1e9;

const schema = z.object({
  index: z.string().min(1).optional(),
  clients: z.coerce.number().int().min(1),
  reference: z.coerce.number().int().min(1),
  duration: z.coerce.number().positive(),
  candidates: z.coerce.number().int().min(1).max(500),
  budgets: z
    .string()
    .transform((s) => list(s).map((b) => (b === 'off' ? 'off' : z.coerce.number().positive().parse(b)))),
  warmup: z.coerce.number().min(0),
  patient: z.boolean().default(false),
  paceMs: z.coerce.number().int().min(0).optional(),
});
type Options = z.output<typeof schema>;

const stats = (ms: number[]) => ({
  n: ms.length,
  p50: quantile(ms, 0.5),
  p90: quantile(ms, 0.9),
  p99: quantile(ms, 0.99),
  max: ms.length ? Math.max(...ms) : 0,
});

type Load = { durationS: number; errors: number; timeouts: number; byStatus: Map<number, number[]> };

/** Closed-loop load (autocannon: impatient); every answer's status and latency. */
async function load(url: string, bodies: string[], clients: number, duration: number): Promise<Load> {
  const byStatus = new Map<number, number[]>();
  const r = await searchLoad(url, bodies, clients, duration, (status, ms) => {
    const l = byStatus.get(status) ?? [];
    l.push(ms);
    byStatus.set(status, l);
  });
  return { durationS: r.duration, errors: r.errors, timeouts: r.timeouts, byStatus };
}

/** One population's row; goodput is its admitted per second over the reference's. */
function row(r: Load, clients: number, referencePerS?: number) {
  const admitted = stats(r.byStatus.get(200) ?? []);
  const perS = admitted.n / r.durationS;
  return {
    clients,
    durationS: r.durationS,
    admitted,
    admittedPerS: perS,
    goodput: referencePerS ? perS / referencePerS : 1,
    refused: stats(r.byStatus.get(503) ?? []),
    other: Object.fromEntries(
      [...r.byStatus.entries()].filter(([s]) => s !== 200 && s !== 503).map(([s, l]) => [s, l.length]),
    ),
    errors: r.errors,
    timeouts: r.timeouts,
  };
}

/** The three populations against one server. */
async function measure(url: string, o: Options, log: Log) {
  const info = await indexInfo(url);
  if (!info.reranker) throw new Error('no cross-encoder loaded: the overload run needs rerank');
  const texts = await sampleQueries(url, info.sentences, 256);
  const bodies = texts.map((text) => JSON.stringify({ text, k: 10, candidates: o.candidates }));
  if (o.warmup > 0) await load(url, bodies, o.reference, o.warmup);
  log(`  reference: ${o.reference} clients`);
  const reference = row(await load(url, bodies, o.reference, o.duration), o.reference);
  log(`  impatient: ${o.clients} clients (Retry-After ignored)`);
  const impatient = row(await load(url, bodies, o.clients, o.duration), o.clients, reference.admittedPerS);
  if (!o.patient) return { reference, impatient };
  log(`  patient: ${o.clients} clients (Retry-After honoured)`);
  const p = await patientLoad(url, bodies, o.clients, o.duration);
  const patient = row({ ...p, timeouts: 0 }, o.clients, reference.admittedPerS);
  return { reference, impatient, patient };
}

async function run(o: Options, log: Log) {
  const index = await ensureDemoIndex(o.index, log);
  const loadBefore = loadavg();
  const rows = [];
  for (const budget of o.budgets) {
    const ms = budget === 'off' ? OFF_MS : budget;
    log(`--wait-budget-ms ${budget}: ${o.duration} s a population`);
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
      ...(budget !== 'off' && o.paceMs !== undefined ? ['--refusal-pace-ms', String(o.paceMs)] : []),
    ]);
    try {
      rows.push({ budget, ...(await measure(server.url, o, log)) });
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
type Row = ReturnType<typeof row>;

function markdown(r: Result): string {
  const s = (x: number) => (x / 1000).toFixed(2);
  const line = (budget: string, who: string, w: Row) =>
    `| ${budget} | ${who} | ${w.admitted.n} | ${w.admittedPerS.toFixed(2)} | ${(100 * w.goodput).toFixed(0)}% | ` +
    `${s(w.admitted.p50)} / ${s(w.admitted.p99)} | ${w.refused.n} | ${s(w.refused.p50)} / ${s(w.refused.p99)} | ` +
    `${JSON.stringify(w.other)}, errors ${w.errors} |`;
  const lines = [
    `rerank@${r.candidates}, ${r.rows[0]?.impatient.durationS.toFixed(0) ?? 0} s a population`,
    '',
    '| wait budget | clients | admitted (200) | per s | goodput | p50 / p99 s | refused (503) | p50 / p99 s | other |',
    '|---|---|---:|---:|---:|---|---:|---|---|',
    ...r.rows.flatMap((w) => {
      const budget = w.budget === 'off' ? 'off (count only)' : `${w.budget} ms`;
      return [
        line(budget, `${w.reference.clients} (reference)`, w.reference),
        line(budget, `${w.impatient.clients} impatient`, w.impatient),
        ...(w.patient ? [line(budget, `${w.patient.clients} patient`, w.patient)] : []),
      ];
    }),
  ];
  return `${lines.join('\n')}\n`;
}

export const overload = defineBenchmark({
  name: 'overload',
  description: 'goodput, admitted vs refused requests under far more clients than the cores serve (shedding)',
  options: (cmd) =>
    cmd
      .option('--index <dir>', 'index to serve (default indexes/demo, built when absent)')
      .option('--clients <n>', 'closed-loop clients', '500')
      .option('--reference <n>', 'clients of the reference run (what the cores serve unhurried)', '4')
      .option('--duration <s>', 'seconds per setting', '15')
      .option('--candidates <n>', 'candidates reranked per request', '20')
      .option('--budgets <list>', "--wait-budget-ms values to compare ('off': by count only)", '500,off')
      .option('--warmup <s>', 'seconds of light load first', '3')
      .option('--patient', 'also a run of clients that honour Retry-After')
      .option('--pace-ms <ms>', "the service's --refusal-pace-ms under a budget (default: the service's)"),
  schema,
  async run(o, log) {
    const result = await run(o, log);
    return { result, markdown: markdown(result) };
  },
});

/**
 * What the label cascade costs a search (docs/labels.md): one search with rerank@20 at a time through the
 * service core, over the demo index, in `fast` and `balanced` alternately (each twice, so drift shows),
 * with p50 / p90 latency and the share of shown candidates the teacher labeled.
 *
 *   npm run lab -- labels-latency [--queries 100]
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineBenchmark, type Log } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { buildIndex } from '../../dist/indexer/build.js';
import { searchOptionsSchema } from '../../dist/search/types.js';
import { openService } from '../../dist/service/index.js';

const schema = z.object({ queries: z.coerce.number().int().min(10).max(2000), dir: z.string().min(1) });
const DEMO = new URL('../../examples/demo-corpus.jsonl', import.meta.url);

interface Row {
  mode: 'fast' | 'balanced';
  p50: number;
  p90: number;
  teacherShare: number;
}

async function run(o: z.output<typeof schema>, log: Log) {
  const loadBefore = loadavg();
  const index = join(o.dir, 'labels-latency-index');
  try {
    readFileSync(join(index, 'manifest.json'));
  } catch {
    log('building the demo index');
    await buildIndex({ inputs: [DEMO.pathname], out: index, quiet: true });
  }
  const texts = readFileSync(DEMO, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { text: string }).text);
  const step = Math.max(1, Math.floor(texts.length / o.queries));
  const queries = texts.filter((_, i) => i % step === 0).slice(0, o.queries);
  const svc = await openService({ index });
  const rows: Row[] = [];
  try {
    for (const mode of ['fast', 'balanced', 'fast', 'balanced'] as const) {
      const opts = searchOptionsSchema.parse({ k: 10, candidates: 20, labels: { mode } });
      await svc.core.search([queries[0] as string], opts);
      const ms: number[] = [];
      let teacher = 0;
      let shown = 0;
      for (const text of queries) {
        const t0 = performance.now();
        const r = await svc.core.search([text], opts);
        ms.push(performance.now() - t0);
        for (const c of r.results[0]?.candidates ?? []) {
          shown++;
          if (c.labeledBy !== undefined && c.labeledBy !== svc.labelCuts.student) teacher++;
        }
      }
      ms.sort((a, b) => a - b);
      const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] as number;
      rows.push({ mode, p50: at(0.5), p90: at(0.9), teacherShare: shown ? teacher / shown : 0 });
      log(`${mode}: p50 ${at(0.5).toFixed(1)} ms`);
    }
  } finally {
    await svc.close();
  }
  return { machine: machineInfo(loadBefore), queries: queries.length, rows };
}

export const labelsLatency = defineBenchmark({
  name: 'labels-latency',
  description: 'search latency with rerank@20 in the fast and balanced label modes, side by side',
  options: (cmd) =>
    cmd
      .option('--queries <n>', 'demo-corpus queries per mode', '100')
      .option('--dir <dir>', 'where the demo index is built (kept for the next run)', 'bench-results'),
  schema,
  run: async (o, log) => {
    const r = await run(o, log);
    const md = [
      `| mode | p50 ms | p90 ms | shown candidates the teacher labeled |`,
      '|---|---:|---:|---:|',
      ...r.rows.map(
        (x) =>
          `| ${x.mode} | ${x.p50.toFixed(1)} | ${x.p90.toFixed(1)} | ${(100 * x.teacherShare).toFixed(1)}% |`,
      ),
    ].join('\n');
    return { result: r, markdown: md };
  },
});

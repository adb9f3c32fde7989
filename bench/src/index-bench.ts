/**
 * `paramine bench index [--n 1000000] [--nq 1000] [--factories "IVF4096,PQ48np;IVF4096,PQ48x4fs"]
 *   [--nprobe 8,16,32,64] [--train N] [--threads 2] [--singles 300] [--kfactor 8] [--passes 3]
 *   [--no-python] [--json result.json]`
 *
 * Seeded clustered 384-d unit vectors; per factory: train time, add rate, memory, single-query and batch
 * QPS and recall@10 against exact search at each nprobe, through this binding and, on the same vectors
 * and settings, through Debian's Python FAISS (/usr/bin/python3) — printed side by side as ours/theirs.
 * Search timings alternate between the two sides pass by pass (best pass kept), so load drift on a shared
 * machine hits both alike.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineBenchmark } from '../../dist/bench/harness.js';
import { chooseFactory } from '../../dist/index/factory.js';
import { createIndex, faissVersion, getNumThreads, setNumThreads } from '../../dist/native/index.js';
import { clusteredDataset, denseIds, recallAtK } from '../../dist/testing/index.js';
import { PythonFaiss } from './index-python.js';

const DIM = 384;
const K = 10;

const count = z.coerce.number().int().min(1);
const indexSchema = z
  .object({
    n: count,
    nq: count,
    factories: z.string().optional(),
    nprobe: z.string(),
    train: count.optional(),
    threads: count,
    singles: count,
    kfactor: z.coerce.number().min(1),
    passes: count,
    seed: z.coerce.number().int(),
    python: z.boolean(),
  })
  .transform((v) => {
    const plan = chooseFactory({ n: v.n, dim: DIM, flatMax: 0 });
    return {
      n: v.n,
      nq: v.nq,
      factories: v.factories?.split(';') ?? [`IVF${plan.nlist},PQ48np`, `IVF${plan.nlist},PQ48x4fs`],
      nprobes: v.nprobe.split(',').map((x) => count.parse(x)),
      // FAISS asks for >= 39 points per list; 40 keeps k-means time down on small machines.
      train: v.train ?? Math.min(v.n, 40 * plan.nlist),
      threads: v.threads,
      singles: v.singles,
      /** Refine factories only: candidates re-scored per result. */
      kFactor: v.kfactor,
      /** Timing passes per search mode (best one kept). */
      passes: v.passes,
      seed: v.seed,
      python: v.python,
    };
  });
export type Config = z.output<typeof indexSchema>;

function log(message: string): void {
  process.stderr.write(`[lab index ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** One side's index for a factory, ready to time. */
interface Built {
  result: Omit<FactoryResult, 'rows'>;
  single(nprobe: number): Promise<number>;
  batch(nprobe: number): Promise<{ seconds: number; recall: number }>;
  concurrent?(nprobe: number): Promise<number>;
  close(): Promise<void>;
}

async function buildOurs(cfg: Config, factory: string, data: Data, dir: string): Promise<Built> {
  const { corpus, queries, gt } = data;
  const ids = denseIds(cfg.n);
  const addBatch = 100_000;
  log(`ours: ${factory}: training on ${cfg.train}`);
  const index = createIndex(factory, DIM, 'ip');
  let t0 = performance.now();
  await index.train(corpus.subarray(0, cfg.train * DIM));
  const trainS = (performance.now() - t0) / 1000;
  const rss0 = process.memoryUsage().rss;
  t0 = performance.now();
  for (let s = 0; s < cfg.n; s += addBatch) {
    const e = Math.min(cfg.n, s + addBatch);
    await index.add(corpus.subarray(s * DIM, e * DIM), ids.subarray(s, e));
  }
  const addS = (performance.now() - t0) / 1000;
  const rss1 = process.memoryUsage().rss;
  const path = join(dir, 'ours.faiss');
  await index.write(path);
  const fileBytes = statSync(path).size;
  rmSync(path);
  log(`ours: ${factory}: train ${trainS.toFixed(1)} s, add ${(cfg.n / addS).toFixed(0)}/s`);
  const query = (i: number) => queries.subarray(i * DIM, (i + 1) * DIM);
  // kFactor matters to refine stages only.
  const opts = (nprobe: number) => ({ nprobe, kFactor: cfg.kFactor });
  return {
    result: { factory, trainS, addPerS: cfg.n / addS, rssDeltaBytes: rss1 - rss0, rssBytes: rss1, fileBytes },
    async single(nprobe) {
      const start = performance.now();
      for (let i = 0; i < cfg.singles; i++) await index.search(query(i), K, opts(nprobe));
      return (performance.now() - start) / 1000;
    },
    async concurrent(nprobe) {
      const start = performance.now();
      let next = 0;
      const worker = async () => {
        while (next < cfg.singles) await index.search(query(next++), K, opts(nprobe));
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
      return (performance.now() - start) / 1000;
    },
    async batch(nprobe) {
      const start = performance.now();
      const r = await index.search(queries, K, opts(nprobe));
      return { seconds: (performance.now() - start) / 1000, recall: recallAtK(gt, r.ids, cfg.nq, K) };
    },
    close: () => index.close(),
  };
}

async function buildTheirs(py: PythonFaiss, factory: string): Promise<Built> {
  log(`theirs: ${factory} through /usr/bin/python3 and its faiss`);
  const b = await py.build(factory);
  log(`theirs: ${factory}: train ${b.trainS.toFixed(1)} s, add ${b.addPerS.toFixed(0)}/s`);
  return {
    result: { factory, ...b },
    single: (nprobe) => py.single(nprobe),
    batch: (nprobe) => py.batch(nprobe),
    close: async () => {},
  };
}

/**
 * Search timings, best of a few passes with the two sides alternating pass by pass: on a shared machine
 * the load drifts, and alternating exposes both sides to the same drift.
 */
async function timeSearches(cfg: Config, sides: Built[]): Promise<Row[][]> {
  const rows: Row[][] = sides.map(() => []);
  for (const nprobe of cfg.nprobes) {
    const single = sides.map(() => Number.POSITIVE_INFINITY);
    const batch = sides.map(() => Number.POSITIVE_INFINITY);
    const rec = sides.map(() => 0);
    for (let pass = 0; pass < cfg.passes; pass++) {
      for (const [i, side] of sides.entries()) single[i] = Math.min(single[i]!, await side.single(nprobe));
      for (const [i, side] of sides.entries()) {
        const b = await side.batch(nprobe);
        batch[i] = Math.min(batch[i]!, b.seconds);
        rec[i] = b.recall;
      }
    }
    for (const [i, side] of sides.entries()) {
      const row: Row = {
        nprobe,
        recall: rec[i]!,
        singleQps: cfg.singles / single[i]!,
        batchQps: cfg.nq / batch[i]!,
      };
      if (side.concurrent) row.concurrentQps = cfg.singles / (await side.concurrent(nprobe));
      rows[i]!.push(row);
    }
    log(`nprobe ${nprobe}: ${rows.map((r) => `recall ${r.at(-1)?.recall.toFixed(3)}`).join(' / ')}`);
  }
  return rows;
}

interface Data {
  corpus: Float32Array;
  queries: Float32Array;
  gt: BigInt64Array;
}

/** Exact top-K of every query through a flat index: the recall reference, and exact search's QPS. */
async function groundTruth(corpus: Float32Array, queries: Float32Array, cfg: Config) {
  log(`exact top-${K} for ${cfg.nq} queries`);
  const flat = createIndex('Flat', DIM, 'ip');
  await flat.add(corpus, denseIds(cfg.n));
  const t0 = performance.now();
  const gt = (await flat.search(queries, K)).ids;
  const exactQps = cfg.nq / ((performance.now() - t0) / 1000);
  await flat.close();
  return { gt, exactQps };
}

/** Python FAISS on the same vectors (handed over as files) with this process's thread settings. */
async function startPython(cfg: Config, data: Data, dir: string): Promise<PythonFaiss> {
  writeFileSync(join(dir, 'corpus.f32'), data.corpus);
  writeFileSync(join(dir, 'queries.f32'), data.queries);
  writeFileSync(join(dir, 'gt.i64'), data.gt);
  // Same thread settings as this process: OpenMP threads, BLAS threads, passive OpenMP waits.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    OMP_WAIT_POLICY: process.env.OMP_WAIT_POLICY ?? 'PASSIVE',
  };
  env.OPENBLAS_NUM_THREADS = String(getNumThreads().blas);
  return PythonFaiss.start(
    {
      dim: DIM,
      n: cfg.n,
      nq: cfg.nq,
      k: K,
      corpus: join(dir, 'corpus.f32'),
      queries: join(dir, 'queries.f32'),
      gt: join(dir, 'gt.i64'),
      train: cfg.train,
      threads: cfg.threads,
      singles: cfg.singles,
      kFactor: cfg.kFactor,
      addBatch: 100_000,
      tmpdir: dir,
    },
    env,
  );
}

/** Every factory built and timed on both sides, ours first. */
async function compareFactories(cfg: Config, data: Data, dir: string, py: PythonFaiss | undefined) {
  const ours: SideResult = { faissVersion: faissVersion(), factories: [] };
  const theirs: SideResult | undefined = py ? { faissVersion: py.faissVersion, factories: [] } : undefined;
  for (const factory of cfg.factories) {
    const mine = await buildOurs(cfg, factory, data, dir);
    const sides = py ? [mine, await buildTheirs(py, factory)] : [mine];
    const rows = await timeSearches(cfg, sides);
    ours.factories.push({ ...mine.result, rows: rows[0] ?? [] });
    if (theirs && sides[1]) theirs.factories.push({ ...sides[1].result, rows: rows[1] ?? [] });
    await mine.close();
  }
  return { ours, theirs };
}

async function indexBenchmark(cfg: Config) {
  setNumThreads(cfg.threads);
  const dir = mkdtempSync(join(tmpdir(), 'paramine-bench-index-'));
  let py: PythonFaiss | undefined;
  try {
    const t0 = performance.now();
    log(`generating ${cfg.n} + ${cfg.nq} vectors`);
    const { corpus, queries } = clusteredDataset(cfg.n, cfg.nq, DIM, { seed: cfg.seed });
    const genS = (performance.now() - t0) / 1000;
    const { gt, exactQps } = await groundTruth(corpus, queries, cfg);
    const data = { corpus, queries, gt };
    if (cfg.python) py = await startPython(cfg, data, dir);
    const { ours, theirs } = await compareFactories(cfg, data, dir, py);
    return { config: cfg, genS, exactQps, ours, theirs };
  } finally {
    py?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const index = defineBenchmark({
  name: 'index',
  description: 'the FAISS binding against Python FAISS: build, QPS, latency and recall on synthetic vectors',
  outIsJson: true,
  options: (cmd) =>
    cmd
      .option('--n <n>', 'corpus vectors', '1000000')
      .option('--nq <n>', 'held-out queries', '1000')
      .option(
        '--factories <list>',
        'factory strings separated by ; (default IVF{nlist},PQ48np;IVF{nlist},PQ48x4fs)',
      )
      .option('--nprobe <list>', 'IVF lists visited, comma-separated', '8,16,32,64')
      .option('--train <n>', 'training vectors (default 40 per IVF list)')
      .option('--threads <n>', 'OpenMP threads on both sides', '2')
      .option('--singles <n>', 'single-query searches timed', '300')
      .option('--kfactor <n>', 'refine factories: candidates re-scored per result', '8')
      .option('--passes <n>', 'timing passes per search mode (best kept)', '3')
      .option('--seed <n>', 'vector seed', '1234')
      .option('--no-python', 'skip Python FAISS'),
  schema: indexSchema,
  async run(cfg) {
    const result = await indexBenchmark(cfg);
    return { result, markdown: indexMarkdown(cfg, result.ours, result.theirs, result) };
  },
});

/** The index benchmark's Markdown: build figures per factory, then search figures per factory and nprobe. */

export interface Row {
  nprobe: number;
  recall: number;
  singleQps: number;
  batchQps: number;
  /** Ours only: single queries with 4 in flight (the service's situation). */
  concurrentQps?: number;
}
export interface FactoryResult {
  factory: string;
  trainS: number;
  addPerS: number;
  rssDeltaBytes: number;
  rssBytes: number;
  fileBytes: number;
  rows: Row[];
}
export interface SideResult {
  faissVersion: string;
  factories: FactoryResult[];
}

function fmt(x: number, digits = 0): string {
  return x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function ratio(a: number, b: number | undefined): string {
  return b === undefined ? '' : ` (${(a / b).toFixed(2)})`;
}

export function indexMarkdown(
  cfg: Config,
  mine: SideResult,
  py: SideResult | undefined,
  extra: { genS: number; exactQps: number },
): string {
  const lines: string[] = [];
  lines.push(
    `n = ${fmt(cfg.n)} clustered 384-d unit vectors (seed ${cfg.seed}), ${cfg.nq} held-out queries, inner product, ` +
      `k = 10, training sample ${fmt(cfg.train)}, ${cfg.threads} OpenMP threads, ${getNumThreads().blas} BLAS thread(s), kFactor ${cfg.kFactor} for refine stages. ` +
      `Exact flat search: ${fmt(extra.exactQps)} queries/s batched. Ratios are ours/theirs (Python FAISS ${py?.faissVersion ?? 'not run'}).`,
    '',
    '| factory | train s ours / theirs | add vec/s ours / theirs | index file bytes/vector | RSS after add, MB | RSS growth during add, bytes/vector |',
    '|---|---|---|---|---|---|',
  );
  for (const f of mine.factories) {
    const p = py?.factories.find((x) => x.factory === f.factory);
    lines.push(
      `| ${f.factory} | ${fmt(f.trainS, 1)}${p ? ` / ${fmt(p.trainS, 1)}` : ''} | ${fmt(f.addPerS)}${p ? ` / ${fmt(p.addPerS)}${ratio(f.addPerS, p.addPerS)}` : ''} | ` +
        `${fmt(f.fileBytes / cfg.n, 1)}${p ? ` / ${fmt(p.fileBytes / cfg.n, 1)}` : ''} | ` +
        `${fmt(f.rssBytes / 2 ** 20)}${p ? ` / ${fmt(p.rssBytes / 2 ** 20)}` : ''} | ` +
        `${fmt(f.rssDeltaBytes / cfg.n, 1)}${p ? ` / ${fmt(p.rssDeltaBytes / cfg.n, 1)}` : ''} |`,
    );
  }
  lines.push(
    '',
    '| factory | nprobe | recall@10 ours / theirs | single-query QPS ours / theirs | batch QPS ours / theirs | single queries, 4 in flight (ours) |',
    '|---|---|---|---|---|---|',
  );
  for (const f of mine.factories) {
    const p = py?.factories.find((x) => x.factory === f.factory);
    for (const r of f.rows) {
      const q = p?.rows.find((x) => x.nprobe === r.nprobe);
      lines.push(
        `| ${f.factory} | ${r.nprobe} | ${r.recall.toFixed(3)}${q ? ` / ${q.recall.toFixed(3)}` : ''} | ` +
          `${fmt(r.singleQps)}${q ? ` / ${fmt(q.singleQps)}${ratio(r.singleQps, q.singleQps)}` : ''} | ` +
          `${fmt(r.batchQps)}${q ? ` / ${fmt(q.batchQps)}${ratio(r.batchQps, q.batchQps)}` : ''} | ${fmt(r.concurrentQps ?? 0)} |`,
      );
    }
  }
  return lines.join('\n');
}

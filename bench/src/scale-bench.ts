/**
 * `npm run lab -- scale --dir DIR [--n 10000000] [--nq 1000] [--nprobe 64,128,256]
 *   [--python-n 1000000] [--passes 3] [--factory F] [--json out.json] [--md out.md]`
 *
 * A build at 10^7 on one machine, vectors streamed from the seeded generator (scale-vectors.ts), each step
 * in its own process (scale-steps.ts) so its peak RSS is its own, steps already done in DIR skipped:
 *   gen -> build (train, fill, write: time, peak RSS, disk) -> exact top 10 by streaming brute force ->
 *   single-query p50/p99 and recall@10 at each nprobe (the HNSW quantizer's efSearch = 2 x nprobe).
 * Then the same factory on the first `--python-n` vectors through this binding and through Python FAISS
 * (pip faiss-cpu 1.7.3 in .venv-faiss, its AVX2 build unless --python-simd generic; scale-bench.py): build
 * times, and single-query timings on the one index file both sides load, alternating pass by pass (best
 * pass kept).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineBenchmark, type Log, list } from '../../dist/bench/harness.js';
import { ShardedIndex } from '../../dist/index/index.js';
import { distanceKernels, faissVersion } from '../../dist/native/index.js';
import { PythonFaiss } from './index-python.js';

const DIM = 384;
const K = 10;

const schema = z.object({
  dir: z
    .string()
    .min(1)
    .transform((d) => resolve(d)),
  n: z.coerce.number().int().min(1000),
  nq: z.coerce.number().int().min(10),
  seed: z.coerce.number().int(),
  nprobe: z
    .string()
    .transform((v) => list(v).map(Number))
    .pipe(z.array(z.number().int().min(1)).min(1)),
  kfactor: z
    .string()
    .transform((v) => list(v).map(Number))
    .pipe(z.array(z.number().min(1)).min(1)),
  pythonN: z.coerce.number().int().min(0),
  python: z.string().min(1),
  pythonSimd: z.enum(['avx2', 'generic']),
  passes: z.coerce.number().int().min(1),
  factory: z.string().min(1).optional(),
});
type Opts = z.output<typeof schema> & { nprobes: number[] };

/** Runs one step in a child process (niced like its parent); resolves to its JSON answer. */
function step(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const script = fileURLToPath(new URL('./scale-steps.js', import.meta.url));
  const child = spawn(process.execPath, [script, name, JSON.stringify(args)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((res, rej) => {
    child.on('exit', (code) =>
      code === 0
        ? res(JSON.parse(out.trim().split('\n').pop() as string))
        : rej(new Error(`${name} exited ${code}`)),
    );
  });
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

function recall(truth: BigInt64Array, got: BigInt64Array, q: number): number {
  const want = new Set(truth.subarray(q * K, (q + 1) * K));
  let hits = 0;
  for (let j = 0; j < K; j++) if (want.has(got[j] as bigint)) hits++;
  return hits / K;
}

interface SearchRow {
  nprobe: number;
  efSearch: number;
  refine: boolean;
  /** Candidates re-scored per hit (refine only). */
  kFactor?: number;
  recall: number;
  p50Ms: number;
  p99Ms: number;
  qps: number;
}

/** Single queries one after another through the index; latency percentiles and recall@10. */
async function singles(
  index: ShardedIndex,
  queries: Float32Array,
  truth: BigInt64Array,
  nprobe: number,
  refine: boolean,
  kFactor?: number,
) {
  const nq = truth.length / K;
  const lat: number[] = [];
  let hits = 0;
  const t0 = performance.now();
  for (let q = 0; q < nq; q++) {
    const t = performance.now();
    const r = await index.search(queries.subarray(q * DIM, (q + 1) * DIM), K, {
      nprobe,
      efSearch: 2 * nprobe,
      refine,
      ...(refine && kFactor ? { kFactor } : {}),
    });
    lat.push(performance.now() - t);
    hits += recall(truth, r.ids, q);
  }
  const total = performance.now() - t0;
  lat.sort((a, b) => a - b);
  return {
    nprobe,
    efSearch: 2 * nprobe,
    refine,
    ...(refine && kFactor ? { kFactor } : {}),
    recall: hits / nq,
    p50Ms: percentile(lat, 50),
    p99Ms: percentile(lat, 99),
    qps: (1000 * nq) / total,
  };
}

function readI64(path: string): BigInt64Array {
  const b = readFileSync(path);
  return new BigInt64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

async function searchFull(o: Opts, indexDir: string, truthPath: string): Promise<SearchRow[]> {
  const b = readFileSync(join(o.dir, 'queries.f32'));
  const queries = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  const truth = readI64(truthPath);
  const index = await ShardedIndex.open(indexDir, { mmap: false });
  const rows: SearchRow[] = [];
  try {
    await singles(
      index,
      queries.subarray(0, 100 * DIM),
      truth.subarray(0, 100 * K),
      o.nprobes[0] as number,
      true,
    ); // warm-up
    for (const nprobe of o.nprobes) {
      // PQ codes alone, then re-scored from vectors.f16 at each kFactor (k * kFactor candidates).
      for (const kFactor of [undefined, ...o.kfactor]) {
        const row = await singles(index, queries, truth, nprobe, kFactor !== undefined, kFactor);
        process.stderr.write(`search ${JSON.stringify(row)}\n`);
        rows.push(row);
      }
    }
  } finally {
    await index.close();
  }
  return rows;
}

/** The subset through both sides: Python's own build timed, then the same index file searched by both. */
async function compare(o: Opts, plan: { factory: string }, sub: Record<string, unknown>, truthPath: string) {
  const env = {
    ...process.env,
    ...(o.pythonSimd === 'generic' ? { FAISS_DISABLE_CPU_FEATURES: 'AVX2' } : {}),
    OMP_WAIT_POLICY: 'PASSIVE',
    OPENBLAS_NUM_THREADS: '1',
  };
  const py = await PythonFaiss.start(
    {
      vectors: join(o.dir, 'vectors.f16'),
      n: o.pythonN,
      dim: DIM,
      queries: join(o.dir, 'queries.f32'),
      truth: truthPath,
      sample: join(o.dir, `sample-${o.pythonN}.i64`),
      niter: 20,
      seed: o.seed,
      threads: 2,
    },
    env,
    { python: o.python, script: fileURLToPath(new URL('../src/scale-bench.py', import.meta.url)) },
  );
  try {
    const built = await py.request<{ trainS: number; addS: number; stages: Record<string, number> }>({
      cmd: 'build',
      factory: plan.factory,
    });
    process.stderr.write(`python build ${JSON.stringify(built)}\n`);
    await py.request({ cmd: 'load', path: join(sub.out as string, 'shard-000.faiss') });
    const b = readFileSync(join(o.dir, 'queries.f32'));
    const queries = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    const truth = readI64(truthPath);
    const index = await ShardedIndex.open(sub.out as string, { mmap: false });
    const rows = [];
    try {
      for (const nprobe of o.nprobes) {
        let ours = { p50Ms: Infinity, qps: 0, recall: 0 };
        let theirs = { p50Ms: Infinity, qps: 0, recall: 0 };
        for (let pass = 0; pass < o.passes; pass++) {
          const a = await singles(index, queries, truth, nprobe, false);
          const r = await py.request<{ latencies: number[]; recall: number }>({
            cmd: 'single',
            nprobe,
            efSearch: 2 * nprobe,
            k: K,
          });
          const lat = r.latencies.map((s) => s * 1000).sort((x, y) => x - y);
          const t = {
            p50Ms: percentile(lat, 50),
            qps: (1000 * lat.length) / lat.reduce((x, y) => x + y, 0),
            recall: r.recall,
          };
          if (a.qps > ours.qps) ours = a;
          if (t.qps > theirs.qps) theirs = t;
        }
        rows.push({ nprobe, ours, theirs, qpsRatio: ours.qps / theirs.qps });
        process.stderr.write(`compare ${JSON.stringify(rows.at(-1))}\n`);
      }
    } finally {
      await index.close();
    }
    const oursTrainS = (sub.trainMs as number) / 1000;
    const oursFillS = (sub.fillMs as number) / 1000;
    return {
      factory: plan.factory,
      faissPython: py.faissVersion,
      pythonSimd: py.simd,
      ourKernels: distanceKernels(),
      ours: { trainS: oursTrainS, fillS: oursFillS, stages: sub.stages },
      theirs: built,
      trainRatio: built.trainS / oursTrainS,
      // Both sides' fill time includes writing the filled index to disk.
      fillRatio: (built.addS + (built.stages.writeS ?? 0)) / oursFillS,
      search: rows,
    };
  } finally {
    py.close();
  }
}

async function run(options: z.output<typeof schema>, log: Log) {
  const o: Opts = { ...options, nprobes: options.nprobe };
  mkdirSync(o.dir, { recursive: true });
  const resultsPath = join(o.dir, 'results.json');
  const results: Record<string, unknown> = existsSync(resultsPath)
    ? JSON.parse(readFileSync(resultsPath, 'utf8'))
    : {};
  const save = () => writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  const base = {
    dir: o.dir,
    n: o.n,
    dim: DIM,
    seed: o.seed,
    nq: o.nq,
    ...(o.factory ? { factory: o.factory } : {}),
  };
  results.machine = {
    cpu: cpus()[0]?.model,
    cores: cpus().length,
    faiss: faissVersion(),
    node: process.version,
  };
  for (const [key, name, args] of [
    ['gen', 'gen', {}],
    ['build', 'build', { limit: o.n }],
    ['truth', 'truth', { limit: o.n }],
  ] as const) {
    if (!results[key]) {
      results[key] = await step(name, { ...base, ...args });
      save();
      log(`${key}: ${JSON.stringify(results[key])}`);
    }
  }
  const built = results.build as { out: string; plan: { factory: string } };
  results.search = await searchFull(o, built.out, join(o.dir, `truth-${o.n}.i64`));
  save();
  if (o.pythonN > 0) {
    const subArgs = { ...base, limit: o.pythonN, factory: built.plan.factory };
    // --python-n equal to --n: the subset is the full build (same factory, sample and truth file).
    const whole = o.pythonN === o.n;
    results.subBuild ??= whole ? results.build : await step('build', subArgs);
    results.subTruth ??= whole ? results.truth : await step('truth', subArgs);
    save();
    // Cached like the steps (delete "compare" from results.json to run it again).
    results.compare ??= await compare(
      o,
      built.plan,
      results.subBuild as Record<string, unknown>,
      join(o.dir, `truth-${o.pythonN}.i64`),
    );
    save();
  }
  return { result: results, markdown: markdown(results.search as SearchRow[], results.compare as Compared) };
}

type Compared =
  | {
      factory: string;
      pythonSimd?: string;
      ourKernels?: string;
      trainRatio: number;
      fillRatio: number;
      search: Array<{
        nprobe: number;
        ours: { p50Ms: number; recall: number };
        theirs: { p50Ms: number; recall: number };
        qpsRatio: number;
      }>;
    }
  | undefined;

function markdown(rows: readonly SearchRow[], compared: Compared): string {
  const lines = [
    '| nprobe | efSearch | scores | recall@10 | p50 ms | p99 ms | QPS (single queries) |',
    '|---:|---:|---|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.nprobe} | ${r.efSearch} | ${r.refine ? `exact re-score of ${10 * (r.kFactor ?? 1)} (kFactor ${r.kFactor ?? 'default'})` : 'PQ only'} | ${r.recall.toFixed(3)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.qps.toFixed(0)} |`,
    ),
    '',
  ];
  if (compared) {
    lines.push(
      `Python FAISS (${compared.pythonSimd ?? 'build not reported'}; ours: ${compared.ourKernels ?? 'FAISS kernels'}) on the subset (${compared.factory}): train ratio ${compared.trainRatio.toFixed(2)}, fill ratio ${compared.fillRatio.toFixed(2)} (theirs / ours time)`,
      '',
      '| nprobe | recall ours / theirs | p50 ms ours / theirs | QPS ratio |',
      '|---:|---|---|---:|',
      ...compared.search.map(
        (c) =>
          `| ${c.nprobe} | ${c.ours.recall.toFixed(3)} / ${c.theirs.recall.toFixed(3)} | ${c.ours.p50Ms.toFixed(2)} / ${c.theirs.p50Ms.toFixed(2)} | ${c.qpsRatio.toFixed(2)} |`,
      ),
      '',
    );
  }
  return lines.join('\n');
}

export const scale = defineBenchmark({
  name: 'scale',
  description:
    'a 10^7 build from seeded vectors (train, fill, RSS, disk, recall@10, p50/p99) and Python FAISS on a subset',
  options: (cmd) =>
    cmd
      .option('--dir <dir>', 'work folder (steps already done there are kept)', 'tmp/scale')
      .option('--n <n>', 'vectors', '10000000')
      .option('--nq <n>', 'queries (exact top 10 by streaming brute force)', '1000')
      .option('--seed <n>', 'generator seed', '1234')
      .option('--nprobe <list>', 'nprobe values searched (efSearch = 2 x nprobe)', '64,128,256')
      .option('--kfactor <list>', 'candidates re-scored from vectors.f16 per hit, each searched', '8,32,64')
      .option('--python-n <n>', 'subset built and searched through Python FAISS too (0: none)', '1000000')
      .option('--python <path>', 'Python with faiss-cpu 1.7.3', '.venv-faiss/bin/python')
      .option(
        '--python-simd <build>',
        "pip FAISS's build: avx2 (what pip loads on such CPUs) or generic",
        'avx2',
      )
      .option('--passes <n>', 'alternating search passes, best kept', '3')
      .option('--factory <f>', 'index factory (default: what auto picks for n)'),
  schema,
  run,
});

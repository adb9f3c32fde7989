/**
 * `node dist/bench/scale-bench.js --dir DIR [--n 10000000] [--nq 1000] [--nprobe 64,128,256]
 *   [--python-n 1000000] [--passes 3] [--factory F] [--json out.json] [--md out.md]`
 *
 * A build at 10^7 on one machine, vectors streamed from the seeded generator (scale-vectors.ts), each step
 * in its own process (scale-steps.ts) so its peak RSS is its own, steps already done in DIR skipped:
 *   gen -> build (train, fill, write: time, peak RSS, disk) -> exact top 10 by streaming brute force ->
 *   single-query p50/p99 and recall@10 at each nprobe (the HNSW quantizer's efSearch = 2 x nprobe).
 * Then the same factory on the first `--python-n` vectors through this binding and through Python FAISS
 * (pip faiss-cpu 1.7.3 in .venv-faiss, generic build; scale-bench.py): build times, and single-query
 * timings on the one index file both sides load, alternating pass by pass (best pass kept).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ShardedIndex } from '../index/index.js';
import { faissVersion } from '../native/index.js';
import { PythonFaiss } from './index-python.js';

const DIM = 384;
const K = 10;

function parse() {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string', default: 'tmp/scale' },
      n: { type: 'string', default: '10000000' },
      nq: { type: 'string', default: '1000' },
      seed: { type: 'string', default: '1234' },
      nprobe: { type: 'string', default: '64,128,256' },
      'python-n': { type: 'string', default: '1000000' },
      python: { type: 'string', default: '.venv-faiss/bin/python' },
      passes: { type: 'string', default: '3' },
      factory: { type: 'string' },
      json: { type: 'string' },
      md: { type: 'string' },
    },
  });
  return {
    dir: resolve(values.dir),
    n: Number(values.n),
    nq: Number(values.nq),
    seed: Number(values.seed),
    nprobes: values.nprobe.split(',').map(Number),
    pythonN: Number(values['python-n']),
    python: values.python,
    passes: Number(values.passes),
    factory: values.factory,
    json: values.json,
    md: values.md,
  };
}

type Opts = ReturnType<typeof parse>;

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
      for (const refine of [true, false]) {
        const row = await singles(index, queries, truth, nprobe, refine);
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
    FAISS_DISABLE_CPU_FEATURES: 'AVX2',
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
    { python: o.python, script: fileURLToPath(new URL('../../src/bench/scale-bench.py', import.meta.url)) },
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
      ours: { trainS: oursTrainS, fillS: oursFillS, stages: sub.stages },
      theirs: built,
      trainRatio: built.trainS / oursTrainS,
      fillRatio: built.addS / oursFillS,
      search: rows,
    };
  } finally {
    py.close();
  }
}

async function main() {
  const o = parse();
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
    }
  }
  const built = results.build as { out: string; plan: { factory: string } };
  results.search = await searchFull(o, built.out, join(o.dir, `truth-${o.n}.i64`));
  save();
  if (o.pythonN > 0) {
    const subArgs = { ...base, limit: o.pythonN, factory: built.plan.factory };
    results.subBuild ??= await step('build', subArgs);
    results.subTruth ??= await step('truth', subArgs);
    save();
    results.compare = await compare(
      o,
      built.plan,
      results.subBuild as Record<string, unknown>,
      join(o.dir, `truth-${o.pythonN}.i64`),
    );
    save();
  }
  if (o.json) writeFileSync(o.json, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(results.search)}\n${JSON.stringify(results.compare ?? {})}\n`);
}

if (process.argv[1]?.endsWith('scale-bench.js')) {
  main().catch((e: unknown) => {
    process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}

/**
 * The steps of the scale benchmark (scale-bench.ts runs each in its own process, so every step's peak RSS
 * is its own): `node dist/bench/scale-steps.js STEP '{json}'`, answering one JSON line on stdout.
 *
 *   gen    n seeded vectors -> DIR/vectors.f16 (half floats), queries -> DIR/queries.f32
 *   build  the build phases (src/index: trainIndex, fillShards, writeIndexManifest) over DIR/vectors.f16
 *   truth  exact top 10 of every query by streaming brute force over the vectors (bounded memory)
 */
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { link, mkdir, open, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  chooseFactory,
  fillShards,
  type IndexPlan,
  mergeTopK,
  planForFactory,
  type SearchResult,
  sampleIds,
  shardFileName,
  splitRange,
  type TrainStage,
  trainIndex,
  VECTORS_FILE,
  VectorFile,
  type VectorSource,
  writeIndexFile,
  writeIndexManifest,
} from '../../dist/index/index.js';
import { createIndex, getNumThreads, setNumThreads } from '../../dist/native/index.js';
import { GEN_CHUNK, generateHalfFile, queryVectors } from './scale-vectors.js';

export interface StepArgs {
  dir: string;
  n: number;
  dim: number;
  seed: number;
  nq: number;
  /** build/truth over the first `limit` rows (default n). */
  limit?: number;
  factory?: string;
  /** Index directory for build (default DIR/index-LIMIT). */
  out?: string;
  shardMemory?: number;
  threads?: number;
}

const MODEL = { id: 'synthetic-clustered', sha256: '0'.repeat(64) };

function log(line: string): void {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

function maxRss(): number {
  return process.resourceUsage().maxRSS * 1024;
}

export async function gen(a: StepArgs) {
  const t0 = Date.now();
  const spec = { n: a.n, dim: a.dim, seed: a.seed };
  let last = 0;
  await generateHalfFile(join(a.dir, VECTORS_FILE), spec, (rows) => {
    if (Date.now() - last > 30_000 || rows === a.n) {
      last = Date.now();
      log(`generated ${rows}/${a.n}`);
    }
  });
  await writeFile(join(a.dir, 'queries.f32'), queryVectors(spec, a.nq));
  return { genMs: Date.now() - t0, maxRssBytes: maxRss() };
}

/** The first `count` rows of a source. */
function prefix(source: VectorSource, count: number): VectorSource {
  return {
    count,
    dim: source.dim,
    read: (first, n) => source.read(first, n),
    readIds: (ids) => source.readIds(ids),
  };
}

export async function build(a: StepArgs) {
  const n = a.limit ?? a.n;
  const out = a.out ?? join(a.dir, `index-${n}`);
  const full = await VectorFile.openFile(join(a.dir, VECTORS_FILE), a.n, a.dim);
  await mkdir(out, { recursive: true });
  await keepVectors(a, n, out);
  const source = prefix(full, n);
  const opts = { n, dim: a.dim, vectorsKept: true };
  const plan: IndexPlan = a.factory ? planForFactory(a.factory, opts) : chooseFactory(opts);
  log(`plan: ${plan.reason}`);
  const stages: Partial<Record<TrainStage, number>> = {};
  let stageStart = Date.now();
  let lastLog = 0;
  const t0 = Date.now();
  const sample = sampleIds(n, plan.trainSize, a.seed);
  const template = await trainIndex({
    plan,
    dim: a.dim,
    metric: 'ip',
    source,
    sampleIds: sample,
    seed: a.seed,
    ...(a.threads ? { threads: a.threads } : {}),
    onProgress: (p) => {
      if (p.done === 0) stageStart = Date.now();
      if (p.done === p.total) stages[p.stage] = (stages[p.stage] ?? 0) + Date.now() - stageStart;
      if (Date.now() - lastLog > 30_000 || p.done === p.total) {
        lastLog = Date.now();
        log(`train ${p.stage} ${p.done}/${p.total}`);
      }
    },
  });
  const trainMs = Date.now() - t0;
  await writeFile(
    join(a.dir, `sample-${n}.i64`),
    BigInt64Array.from(sample, (x) => BigInt(x)),
  );
  await writeIndexFile(template, join(out, 'trained.faiss'));
  const perShard = 2 * plan.cost.perVector.ram * n;
  const shards = Math.max(1, Math.ceil(perShard / (a.shardMemory ?? 2 * 2 ** 30)));
  const ranges = splitRange(n, shards);
  const t1 = Date.now();
  lastLog = 0;
  await fillShards({
    template,
    source,
    ranges,
    save: (i, index) => writeIndexFile(index, join(out, shardFileName(i))),
    onProgress: (added) => {
      if (Date.now() - lastLog > 30_000) {
        lastLog = Date.now();
        log(`fill ${added}/${n}`);
      }
    },
  });
  const fillMs = Date.now() - t1;
  await template.close();
  await full.close();
  await writeIndexManifest(
    out,
    {
      factory: plan.factory,
      dim: a.dim,
      metric: 'ip',
      nlist: plan.nlist,
      shards: ranges.map((r, i) => ({ file: shardFileName(i), count: r.count })),
    },
    {
      model: MODEL,
      vectors: { file: VECTORS_FILE, dtype: 'float16', count: n, dim: a.dim },
      search: plan.search,
      build: { plan, trainMs, fillMs, stages },
      overwrite: true,
    },
  );
  const indexBytes = await shardBytes(out);
  return { n, out, plan, shards, trainMs, stages, fillMs, indexBytes, maxRssBytes: maxRss() };
}

/** The index keeps the vectors it re-scores with: a hard link of the whole file, a copy of a prefix. */
async function keepVectors(a: StepArgs, n: number, out: string): Promise<void> {
  const kept = join(out, VECTORS_FILE);
  if (existsSync(kept)) return;
  if (n === a.n) await link(join(a.dir, VECTORS_FILE), kept);
  else await copyPrefix(join(a.dir, VECTORS_FILE), kept, n * a.dim * 2);
}

async function shardBytes(out: string): Promise<number> {
  let bytes = 0;
  for (const f of await readdir(out))
    if (/^shard-\d+\.faiss$/.test(f)) bytes += (await stat(join(out, f))).size;
  return bytes;
}

async function copyPrefix(from: string, to: string, bytes: number): Promise<void> {
  await pipeline(createReadStream(from, { end: bytes - 1 }), createWriteStream(to));
}

/** Exact top 10 of each query over rows [0, limit), in chunks: one Flat index of a chunk at a time. */
export async function truth(a: StepArgs) {
  const n = a.limit ?? a.n;
  const k = 10;
  const t0 = Date.now();
  const saved = getNumThreads();
  setNumThreads(a.threads ?? saved.omp, a.threads ?? saved.omp);
  const vectors = await VectorFile.openFile(join(a.dir, VECTORS_FILE), a.n, a.dim);
  const queries = new Float32Array((await open(join(a.dir, 'queries.f32'), 'r').then(readAll)).buffer);
  let best: SearchResult = {
    distances: new Float32Array(a.nq * k).fill(-3.4e38),
    ids: new BigInt64Array(a.nq * k).fill(-1n),
  };
  for (let first = 0; first < n; first += GEN_CHUNK) {
    const count = Math.min(GEN_CHUNK, n - first);
    const flat = createIndex('Flat', a.dim, 'ip');
    await flat.add(
      await vectors.read(first, count),
      BigInt64Array.from({ length: count }, (_, i) => BigInt(first + i)),
    );
    best = mergeTopK([best, await flat.search(queries, k)], a.nq, k, 'ip');
    await flat.close();
    if ((first / GEN_CHUNK) % 16 === 0) log(`truth ${first + count}/${n}`);
  }
  await vectors.close();
  await writeFile(join(a.dir, `truth-${n}.i64`), best.ids);
  return { n, truthMs: Date.now() - t0, maxRssBytes: maxRss() };
}

async function readAll(fh: Awaited<ReturnType<typeof open>>): Promise<Uint8Array> {
  try {
    const buf = await fh.readFile();
    const out = new Uint8Array(buf.byteLength);
    out.set(buf);
    return out;
  } finally {
    await fh.close();
  }
}

const steps: Record<string, (a: StepArgs) => Promise<unknown>> = { gen, build, truth };

if (process.argv[1]?.endsWith('scale-steps.js')) {
  const [step, json] = process.argv.slice(2);
  const run = steps[step ?? ''];
  if (!run || !json) {
    process.stderr.write('usage: scale-steps.js gen|build|truth JSON\n');
    process.exit(2);
  }
  run(JSON.parse(json) as StepArgs).then(
    (r) => process.stdout.write(`${JSON.stringify(r)}\n`),
    (e: unknown) => {
      process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
      process.exit(1);
    },
  );
}

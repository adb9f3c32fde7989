/**
 * Vector-level benchmarks of scoped mining (BENCHMARKS.md, "Scopes"), through the harness:
 *
 *   npm run lab -- scopes-crossover [--n 100000 --factory IVF1024,PQ48np]   exact (flat over a group) vs index + id selector
 *   npm run lab -- scopes-calibrate [--keep 0.98]   the encoder's cosine standing for ParaSCI's 0.931
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { type BenchOutput, defineBenchmark, type Log } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { readPairs } from '../../dist/corpus/index.js';
import { Encoder } from '../../dist/encode/index.js';
import { prng } from '../../dist/index/index.js';
import { resolveModelDir } from '../../dist/models/resolve.js';
import { createIndex, type FaissIndex } from '../../dist/native/index.js';
import { clusteredDataset, denseIds } from '../../dist/testing/index.js';

const crossSchema = z.object({ n: z.coerce.number().int().min(100), factory: z.string().min(1) });
const calSchema = z.object({ data: z.string().min(1), keep: z.coerce.number().gt(0).lt(1) });

/** Exact search over one random group of `size` members vs the IVF index restricted to it. */
async function crossoverAt(
  size: number,
  c: {
    corpus: Float32Array;
    n: number;
    dim: number;
    nq: number;
    k: number;
    ivf: FaissIndex;
    rand: () => number;
  },
) {
  const { corpus, n, dim, nq, k, ivf, rand } = c;
  const ids = new Set<number>();
  while (ids.size < size) ids.add(Math.floor(rand() * n));
  const members = [...ids].sort((a, b) => a - b);
  const queries = new Float32Array(nq * dim);
  for (let q = 0; q < nq; q++)
    queries.set(
      corpus.subarray((members[q % size] as number) * dim, ((members[q % size] as number) + 1) * dim),
      q * dim,
    );
  const reps = 3;
  let exactMs = 0;
  let exactIds: BigInt64Array = new BigInt64Array();
  for (let r = 0; r < reps; r++) {
    const t1 = performance.now();
    const vecs = new Float32Array(size * dim);
    members.forEach((id, i) => {
      vecs.set(corpus.subarray(id * dim, (id + 1) * dim), i * dim);
    });
    const flat = createIndex('Flat', dim, 'ip');
    await flat.add(
      vecs,
      BigInt64Array.from(members, (x) => BigInt(x)),
    );
    exactIds = (await flat.search(queries, k)).ids;
    await flat.close();
    exactMs += performance.now() - t1;
  }
  let selMs = 0;
  let selIds: BigInt64Array = new BigInt64Array();
  for (let r = 0; r < reps; r++) {
    const t1 = performance.now();
    selIds = (
      await ivf.search(queries, k, { ids: BigInt64Array.from(members, (x) => BigInt(x)), nprobe: 32 })
    ).ids;
    selMs += performance.now() - t1;
  }
  let agree = 0;
  for (let q = 0; q < nq; q++) {
    const want = new Set(exactIds.slice(q * k, q * k + k));
    for (const id of selIds.slice(q * k, q * k + k)) if (want.has(id)) agree++;
  }
  return { size, exactMs: exactMs / reps, selectorMs: selMs / reps, recall: agree / (nq * k) };
}

/** Exact flat search over a group's vectors vs the IVF-PQ index with an id selector, by group size. */
async function crossover(
  o: z.output<typeof crossSchema>,
  log: Log,
): Promise<BenchOutput<Record<string, unknown>>> {
  const { n, factory } = o;
  const loadBefore = loadavg();
  const dim = 384;
  const nq = 64;
  const k = 10;
  const { corpus } = clusteredDataset(n, 0, dim, { seed: 5 });
  const ivf = createIndex(factory, dim, 'ip');
  const t0 = performance.now();
  await ivf.train(corpus.subarray(0, Math.min(n, 50_000) * dim));
  await ivf.add(corpus, denseIds(n));
  const buildSeconds = (performance.now() - t0) / 1000;
  const rand = prng(11);
  const result: Record<string, unknown> = {
    machine: machineInfo(loadBefore),
    n,
    dim,
    factory,
    nq,
    k,
    nprobe: 32,
    buildSeconds,
    sizes: [] as unknown[],
  };
  const lines = [
    '| group size | exact (ms) | index + selector (ms) | selector recall@10 vs exact |',
    '|---|---|---|---|',
  ];
  for (const size of [100, 1000, 5000, 20_000, 50_000, 100_000].filter((s) => s <= n)) {
    const row = await crossoverAt(size, { corpus, n, dim, nq, k, ivf, rand });
    (result.sizes as unknown[]).push(row);
    lines.push(
      `| ${size} | ${row.exactMs.toFixed(1)} | ${row.selectorMs.toFixed(1)} | ${row.recall.toFixed(3)} |`,
    );
    log(JSON.stringify(row));
  }
  await ivf.close();
  return { result, markdown: `${lines.join('\n')}\n` };
}

const cosines = (v: Float32Array, dim: number, pairs: Array<[number, number]>) =>
  pairs.map(([a, b]) => {
    let s = 0;
    for (let d = 0; d < dim; d++) s += (v[a * dim + d] as number) * (v[b * dim + d] as number);
    return s;
  });

/** The cosine that keeps the same share of ParaSCI-ACL val pairs as candidates as the paper's 0.931 did. */
async function calibrate(o: z.output<typeof calSchema>): Promise<BenchOutput<Record<string, unknown>>> {
  const loadBefore = loadavg();
  const pairs = await readPairs(join(o.data, 'parasci/acl/val.src'));
  const texts = pairs.flatMap((p) => [p.s1, p.s2]);
  const encoder = await Encoder.open(resolveModelDir('all-minilm-l6-v2'));
  const v = await encoder.encode(texts);
  const dim = encoder.dim;
  await encoder.close();
  const gold = cosines(
    v,
    dim,
    pairs.map((_, i) => [2 * i, 2 * i + 1]),
  ).sort((a, b) => a - b);
  const rand = prng(3);
  const random = cosines(
    v,
    dim,
    pairs.map(
      () => [Math.floor(rand() * texts.length), Math.floor(rand() * texts.length)] as [number, number],
    ),
  );
  const { keep } = o;
  const threshold = gold[Math.floor((1 - keep) * gold.length)] as number;
  const q = (p: number) => gold[Math.floor(p * (gold.length - 1))] as number;
  const result = {
    machine: machineInfo(loadBefore),
    pairs: pairs.length,
    keep,
    threshold,
    goldQuantiles: { p01: q(0.01), p02: q(0.02), p05: q(0.05), p10: q(0.1), p50: q(0.5) },
    randomAbove: random.filter((c) => c >= threshold).length / random.length,
  };
  const markdown = `ParaSCI-ACL val, all-MiniLM-L6-v2: cosine ${threshold.toFixed(3)} keeps ${(100 * keep).toFixed(0)}% of the ${pairs.length} pairs; ${(100 * result.randomAbove).toFixed(2)}% of random pairs reach it\n`;
  return { result, markdown };
}

export const scopesCrossover = defineBenchmark({
  name: 'scopes-crossover',
  description:
    'a group searched exactly (flat over its vectors) vs through the IVF-PQ index with an id selector',
  options: (cmd) =>
    cmd
      .option('--n <n>', 'seeded clustered 384-d vectors in the index', '100000')
      .option('--factory <f>', 'the index', 'IVF1024,PQ48np'),
  schema: crossSchema,
  run: crossover,
});

export const scopesCalibrate = defineBenchmark({
  name: 'scopes-calibrate',
  description:
    "the all-MiniLM-L6-v2 cosine that keeps the share of ParaSCI-ACL val pairs ParaSCI's 0.931 kept",
  options: (cmd) =>
    cmd
      .option('--data <dir>', 'the shared data folder', process.env.PARAMINE_DATA ?? '../shared/data')
      .option('--keep <r>', 'share of the val pairs to keep', '0.98'),
  schema: calSchema,
  run: calibrate,
});

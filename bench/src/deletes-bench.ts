/**
 * Deletes at density (issue #51, BENCHMARKS.md "Writes"): an index over `--n` seeded clustered vectors
 * (the planner's factory, vectors.f16 kept), searched one query at a time with none, 1% and 10% of it
 * deleted (random ids), in one invocation: the deleted ids skipped inside the search (the live index's
 * bitmap, tombstones.ts) beside the older over-fetch (a plain set: k plus the tombstones, up to 1,024
 * deep). Latency p50 / p99 and, for the same queries, how many of the k answers are live and how near
 * they are (recall@10 against the exact live neighbours).
 *
 *   npm run lab -- deletes [--n 200000] [--nq 1000] [--dim 384]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineBenchmark, type Log } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import {
  chooseFactory,
  exactTopK,
  gatherRows,
  LiveIndex,
  ShardedIndex,
  TombstoneSet,
  type VectorSource,
} from '../../dist/index/index.js';
import { clusteredSpace, recallAtK, writeVectorIndex } from '../../dist/testing/index.js';

const schema = z.object({
  n: z.coerce.number().int().min(10_000),
  nq: z.coerce.number().int().min(10).max(10_000),
  dim: z.coerce.number().int().min(8).max(4096),
  seed: z.coerce.number().int(),
});
type Options = z.output<typeof schema>;
const K = 10;

interface Row {
  deleted: number;
  path: 'in-search' | 'over-fetch';
  p50Ms: number;
  p99Ms: number;
  /** Share of the nq x k answers that are live sentences. */
  filled: number;
  recall: number;
}

/** Vectors in memory as a vector source. */
const memory = (vectors: Float32Array, dim: number): VectorSource => ({
  count: vectors.length / dim,
  dim,
  read: async (first, count) => vectors.subarray(first * dim, (first + count) * dim),
  readIds: async (ids) => gatherRows(vectors, ids, dim),
});

/** Ids 0..n-1 in a seeded random order. */
function shuffled(n: number, seed: number): number[] {
  const ids = Array.from({ length: n }, (_, i) => i);
  let s = seed;
  for (let i = n - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [ids[i], ids[j]] = [ids[j] as number, ids[i] as number];
  }
  return ids;
}

interface Config {
  deleted: number;
  path: Row['path'];
  live: LiveIndex;
  dead: ReadonlySet<number>;
  truth: BigInt64Array;
  times: number[];
  ids: BigInt64Array;
}

/** Every configuration answers each query in turn, so whatever slows the machine a moment slows them all. */
async function measure(configs: Config[], queries: Float32Array, o: Options): Promise<Row[]> {
  for (let q = 0; q < o.nq; q++) {
    const query = queries.subarray(q * o.dim, (q + 1) * o.dim);
    for (const c of configs) {
      const t0 = performance.now();
      const r = await c.live.search(query, K);
      c.times.push(performance.now() - t0);
      c.ids.set(r.ids, q * K);
    }
  }
  return configs.map((c) => {
    const times = [...c.times].sort((a, b) => a - b);
    const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] as number;
    const filled = [...c.ids].filter((id) => id >= 0n && !c.dead.has(Number(id))).length / c.ids.length;
    return {
      deleted: c.deleted,
      path: c.path,
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      filled,
      recall: recallAtK(c.truth, c.ids, o.nq, K),
    };
  });
}

async function run(o: Options, log: Log): Promise<Result> {
  const loadBefore = loadavg();
  const space = clusteredSpace(o.n, o.dim, { seed: o.seed });
  const vectors = space.sample(o.n, o.seed + 1).vectors;
  const queries = space.sample(o.nq, o.seed + 2).vectors;
  const plan = chooseFactory({ n: o.n, dim: o.dim, metric: 'ip', vectorsKept: true });
  const dir = mkdtempSync(join(tmpdir(), 'paramine-deletes-bench-'));
  try {
    log(`building ${plan.factory} over ${o.n} clustered ${o.dim}-d vectors`);
    await writeVectorIndex(join(dir, 'index'), vectors, plan);
    const base = await ShardedIndex.open(join(dir, 'index'));
    const order = shuffled(o.n, o.seed);
    const configs: Config[] = [];
    let rows: Row[];
    try {
      for (const share of [0, 0.01, 0.1]) {
        const gone = order.slice(0, Math.round(share * o.n));
        const dead = new Set(gone);
        // The exact neighbours among the live vectors.
        const truth = await exactTopK(memory(vectors, o.dim), queries, K, 'ip', { skipIds: dead });
        for (const path of share === 0 ? (['in-search'] as const) : (['in-search', 'over-fetch'] as const)) {
          const live = new LiveIndex(base, path === 'in-search' ? new TombstoneSet(gone) : dead);
          configs.push({
            deleted: share,
            path,
            live,
            dead,
            truth,
            times: [],
            ids: new BigInt64Array(o.nq * K),
          });
        }
      }
      // A warm pass first: the first searches page the shards in.
      for (let q = 0; q < 100; q++) {
        for (const c of configs) await c.live.search(queries.subarray(q * o.dim, (q + 1) * o.dim), K);
      }
      log(`${configs.length} configurations, ${o.nq} queries each, interleaved`);
      rows = await measure(configs, queries, o);
    } finally {
      await base.close();
    }
    return {
      benchmark: 'deletes',
      machine: machineInfo(loadBefore),
      options: o,
      factory: plan.factory,
      rows,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Result {
  benchmark: string;
  machine: ReturnType<typeof machineInfo>;
  options: Options;
  factory: string;
  rows: Row[];
}

function markdown(r: Result): string {
  const none = r.rows.find((x) => x.deleted === 0) as Row;
  return [
    `| ${r.factory}, ${r.options.n} vectors, one query at a time | deleted | p50 | p99 | p99 / none | live answers | recall@10 |`,
    '|---|---:|---:|---:|---:|---:|---:|',
    ...r.rows.map(
      (x) =>
        `| ${x.deleted === 0 ? 'no deletes' : x.path === 'in-search' ? 'skipped inside the search' : 'over-fetch (k + tombstones, up to 1,024)'} | ${(100 * x.deleted).toFixed(0)}% | ${x.p50Ms.toFixed(2)} ms | ${x.p99Ms.toFixed(2)} ms | ${(x.p99Ms / none.p99Ms).toFixed(2)}x | ${(100 * x.filled).toFixed(1)}% | ${x.recall.toFixed(3)} |`,
    ),
    '',
  ].join('\n');
}

export const deletesBench = defineBenchmark({
  name: 'deletes',
  description:
    'search latency and recall with 0%, 1% and 10% deleted: skipped inside the search vs over-fetch',
  options: (cmd) =>
    cmd
      .option('--n <n>', 'built vectors', '200000')
      .option('--nq <n>', 'queries, one at a time', '1000')
      .option('--dim <d>', 'dimension', '384')
      .option('--seed <n>', 'seed', '7'),
  schema,
  run: async (o, log) => {
    const r = await run(o, log);
    return { result: r, markdown: markdown(r) };
  },
});

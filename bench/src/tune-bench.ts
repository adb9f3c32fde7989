/**
 * `npm run lab -- tune`: an index under a RAM budget, tuned against exact ground truth, its operating
 * points, and (with --autofaiss PYTHON) autofaiss's pick under the same budget and threads, measured on
 * the same held-out queries and the same exact neighbours.
 *
 *   npm run lab -- tune --n 100000 --max-ram 16MB --threads 2 [--autofaiss .venv-autofaiss/bin/python]
 *
 * Vectors: seeded clustered 384-d unit vectors (src/testing/vectors.ts), stored as vectors.f16 as the
 * indexer stores embeddings; autofaiss gets those same (half-rounded) vectors as float32. Two disjoint
 * samples of the collection: the tuning sample (paramine only) and the evaluation sample (both tools).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineBenchmark, type Log } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { ParamineError } from '../../dist/errors.js';
import {
  chooseFactory,
  exactTopK,
  formatBytes,
  heldOutIds,
  type OperatingPoint,
  recallOf,
  ShardedIndex,
  tuneIndexDir,
  VectorFile,
} from '../../dist/index/index.js';
import { parseBytes } from '../../dist/indexer/options.js';
import { setNumThreads } from '../../dist/native/index.js';
import { clusteredSpace, writeVectorIndex } from '../../dist/testing/index.js';

const schema = z.object({
  n: z.coerce.number().int().min(1000).default(100_000),
  dim: z.coerce.number().int().min(8).default(384),
  maxRam: z.string().default('16MB'),
  targetRecall: z.coerce.number().gt(0).max(1).default(0.95),
  queries: z.coerce.number().int().min(10).default(1000),
  latencyQueries: z.coerce.number().int().min(10).default(300),
  threads: z.coerce.number().int().min(1).default(2),
  seed: z.coerce.number().int().default(7),
  work: z.string().default('/tmp/paramine-bench-tune'),
  autofaiss: z.string().optional(),
  /** The budget covers the re-score too: no memory-mapped vectors.f16 refine, PQ scores final. */
  strictRam: z.boolean().default(false),
  /** Real embeddings instead of the generator: the first n rows of an index's vectors.f16. */
  vectors: z.string().min(1).optional(),
});

/** The first n rows of a half-float vectors file (an index's vectors.f16). */
async function readVectors(path: string, n: number, dim: number): Promise<Float32Array> {
  const rows = Math.floor(statSync(path).size / (2 * dim));
  if (rows < n) {
    throw new ParamineError('BAD_INPUT', `${path} holds ${rows} ${dim}-d vectors, fewer than --n ${n}`, {
      field: 'vectors',
    });
  }
  const file = await VectorFile.openFile(path, rows, dim);
  try {
    return await file.read(0, n);
  } finally {
    await file.close();
  }
}

/** A .npy file (format 1.0) of a 1-d or 2-d little-endian array. */
function npy(path: string, data: Float32Array | BigInt64Array, shape: number[]): void {
  const descr = data instanceof Float32Array ? '<f4' : '<i8';
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  header += `${' '.repeat(63 - ((10 + header.length) % 64))}\n`;
  const head = Buffer.alloc(10);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]).copy(head);
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
}

interface Side {
  tool: string;
  index: string;
  params: string;
  ramBytes: number | null;
  recall: number;
  p50Ms: number;
  p99Ms: number;
  buildS: number;
}

/** recall@k and single-query latency of the index's defaults on the evaluation sample. */
async function evaluate(
  index: ShardedIndex,
  queries: Float32Array,
  ids: readonly number[],
  truth: BigInt64Array,
  k: number,
  singles: number,
): Promise<{ recall: number; p50Ms: number; p99Ms: number }> {
  const r = await index.search(queries, k + 1);
  const approx = new BigInt64Array(ids.length * k).fill(-1n);
  ids.forEach((id, q) => {
    const row = Array.from(r.ids.subarray(q * (k + 1), (q + 1) * (k + 1))).filter((x) => x !== BigInt(id));
    approx.set(row.slice(0, k), q * k);
  });
  const times: number[] = [];
  for (let q = 0; q < singles; q++) {
    const t0 = performance.now();
    await index.search(queries.subarray(q * index.dim, (q + 1) * index.dim), k + 1);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)] ?? 0;
  return { recall: recallOf(truth, approx, ids.length, k).recall, p50Ms: at(0.5), p99Ms: at(0.99) };
}

function runAutofaiss(python: string, config: Record<string, unknown>, log: Log): Promise<Side> {
  const script = fileURLToPath(new URL('../src/autofaiss-bench.py', import.meta.url));
  return new Promise((ok, fail) => {
    const child = spawn(python, [script, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    child.stderr.on('data', (b: Buffer) => {
      err += b.toString();
    });
    child.on('error', fail);
    child.on('close', (code) => {
      if (code !== 0) return fail(new Error(`autofaiss exited ${code}: ${err.slice(-2000)}`));
      const r = JSON.parse(out.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
      log(`autofaiss: ${JSON.stringify(r)}`);
      ok({
        tool: `autofaiss 2.18.0 (faiss ${String(r.faissVersion)})`,
        index: String(r.indexKey),
        params: String(r.indexParam),
        ramBytes: typeof r.sizeBytes === 'number' ? r.sizeBytes : null,
        recall: Number(r.recall),
        p50Ms: Number(r.p50Ms),
        p99Ms: Number(r.p99Ms),
        buildS: Number(r.buildS),
      });
    });
  });
}

/** The same vectors, evaluation queries and exact neighbours as .npy files, then autofaiss on them. */
async function autofaissSide(
  o: z.output<typeof schema>,
  work: string,
  source: VectorFile,
  evalSet: { queries: Float32Array; ids: number[]; truth: BigInt64Array },
  log: Log,
): Promise<Side> {
  const { queries, ids, truth } = evalSet;
  npy(join(work, 'corpus.npy'), await source.read(0, o.n), [o.n, o.dim]);
  npy(join(work, 'queries.npy'), queries, [ids.length, o.dim]);
  npy(
    join(work, 'query-ids.npy'),
    BigInt64Array.from(ids, (x) => BigInt(x)),
    [ids.length],
  );
  npy(join(work, 'truth.npy'), truth, [ids.length, 10]);
  log('autofaiss: building');
  const cfg = { dir: work, maxRam: o.maxRam, threads: o.threads, k: 10, latencyQueries: o.latencyQueries };
  return runAutofaiss(o.autofaiss as string, cfg, log);
}

function pointsTable(points: readonly OperatingPoint[], chosen: OperatingPoint): string[] {
  return [
    '| nprobe | efSearch | kFactor | recall@10 (± s.e.) | p50 ms | p99 ms | |',
    '|---:|---:|---:|---:|---:|---:|---|',
    ...points.map(
      (p) =>
        `| ${p.nprobe} | ${p.efSearch ?? '–'} | ${p.kFactor} | ${p.recall.toFixed(4)} ± ${(p.recallStderr ?? 0).toFixed(4)} ` +
        `| ${p.p50Ms.toFixed(3)} | ${p.p99Ms.toFixed(3)} | ${p === chosen ? '**default**' : ''} |`,
    ),
  ];
}

export const tune = defineBenchmark({
  name: 'tune',
  description: 'an index under a RAM budget, tuned against exact ground truth (and autofaiss beside it)',
  options: (cmd) =>
    cmd
      .option('--n <n>', 'vectors', '100000')
      .option('--dim <d>', 'dimension', '384')
      .option('--max-ram <size>', 'RAM budget of both tools', '16MB')
      .option('--target-recall <r>', 'paramine: defaults reach this recall@10', '0.95')
      .option('--queries <n>', 'held-out queries per sample (tuning; evaluation)', '1000')
      .option('--latency-queries <n>', 'queries timed one at a time', '300')
      .option('--threads <n>', 'threads of both tools', '2')
      .option('--seed <n>', 'seed of the vectors', '7')
      .option('--work <dir>', 'scratch directory (index, .npy files)', '/tmp/paramine-bench-tune')
      .option('--autofaiss <python>', 'python with autofaiss 2.18.0 (e.g. .venv-autofaiss/bin/python)')
      .option(
        '--strict-ram',
        'the budget covers the re-score too: no vectors.f16 refine (PQ scores final)',
        false,
      )
      .option(
        '--vectors <file>',
        'real embeddings: the first --n rows of an index vectors.f16 (default: generated)',
      ),
  schema,
  async run(o, log) {
    const load = loadavg();
    setNumThreads(o.threads, o.threads);
    const budget = parseBytes(o.maxRam) ?? 0;
    const work = resolve(o.work);
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    const dir = join(work, 'index');
    const what = o.vectors
      ? `the first ${o.n} ${o.dim}-d vectors of ${o.vectors}`
      : `${o.n} seeded clustered ${o.dim}-d vectors`;
    log(what);
    const corpus = o.vectors
      ? await readVectors(o.vectors, o.n, o.dim)
      : clusteredSpace(o.n, o.dim, { seed: o.seed }).sample(o.n, o.seed + 1).vectors;
    const plan = chooseFactory({ n: o.n, dim: o.dim, vectorsKept: !o.strictRam, maxRamBytes: budget });
    log(plan.reason);
    let t0 = performance.now();
    await writeVectorIndex(dir, corpus, plan, { threads: o.threads });
    const buildS = (performance.now() - t0) / 1000;
    t0 = performance.now();
    const tuned = await tuneIndexDir(dir, {
      queries: o.queries,
      targetRecall: o.targetRecall,
      latencyQueries: o.latencyQueries,
      seed: 20,
      onProgress: (p) => p.done === p.total && log(`${p.stage} done`),
    });
    const tuneS = (performance.now() - t0) / 1000;
    const source = (await VectorFile.open(dir)) as VectorFile;
    const ids = heldOutIds(o.n, o.queries, 99, new Set(heldOutIds(o.n, o.queries, 20)));
    const queries = await source.readIds(ids);
    const truth = await exactTopK(source, queries, 10, 'ip', { excludeIds: ids });
    const index = await ShardedIndex.open(dir);
    const mine = await evaluate(index, queries, ids, truth, 10, Math.min(o.latencyQueries, ids.length));
    await index.close();
    const c = tuned.chosen;
    const sides: Side[] = [
      {
        tool: `paramine (auto under --max-ram${o.strictRam ? ', no memory-mapped vectors' : ''}, tuned)`,
        index: plan.factory + (plan.refine === 'vectors' ? ' + exact re-score from mmapped vectors.f16' : ''),
        params: `nprobe=${c.nprobe}${c.efSearch ? `,efSearch=${c.efSearch}` : ''},kFactor=${c.kFactor}`,
        ramBytes: plan.cost.total.ram,
        ...mine,
        buildS: buildS + tuneS,
      },
    ];
    if (o.autofaiss) sides.push(await autofaissSide(o, work, source, { queries, ids, truth }, log));
    await source.close();
    const markdown = [
      `Operating points (Pareto front) of \`${plan.factory}\` on ${what}, ` +
        `RAM budget ${formatBytes(budget)} (model: ${formatBytes(plan.cost.total.ram)}), ${o.threads} threads; ` +
        `${tuned.tuning.settings} settings swept on ${tuned.tuning.queries} held-out queries in ${tuneS.toFixed(0)} s:`,
      '',
      ...pointsTable(tuned.front, c),
      '',
      `Side by side, evaluated on a second, disjoint sample of ${ids.length} held-out queries (exact top 10 by ` +
        'brute force, each query left out of its own results):',
      '',
      '| tool | index | search parameters | RAM (model / reported) | recall@10 | p50 ms | p99 ms | build s |',
      '|---|---|---|---:|---:|---:|---:|---:|',
      ...sides.map(
        (s) =>
          `| ${s.tool} | \`${s.index}\` | \`${s.params}\` | ${s.ramBytes === null ? '?' : formatBytes(s.ramBytes)} ` +
          `| ${s.recall.toFixed(4)} | ${s.p50Ms.toFixed(3)} | ${s.p99Ms.toFixed(3)} | ${s.buildS.toFixed(1)} |`,
      ),
    ].join('\n');
    return {
      result: {
        options: o,
        plan: plan.reason,
        tuning: tuned.tuning,
        front: tuned.front,
        sides,
        machine: machineInfo(load),
      },
      markdown,
    };
  },
});

/**
 * Tuning an index against exact ground truth:
 *
 *   1. `queries` held-out queries: a seeded sample of the collection's own stored vectors (vectors.f16),
 *      each left out of its own results (as a mining job leaves a sentence out of its neighbours);
 *   2. their exact top k by streaming brute force over the stored vectors (exact.ts: bounded memory);
 *   3. a sweep of nprobe, the HNSW quantizer's efSearch and the refine factor (kFactor): recall@k of each
 *      setting on all queries (batched), and single-query latency p50 / p99 on `latencyQueries` of them.
 *      The default sweep ('target') serves the target: each series of nprobe stops once its recall is past
 *      the target plus a margin (costlier points could only be chosen for recall nobody asked for), or once
 *      it is slower than the cheapest point already past the target (the most accurate series run first, so
 *      one is found early); a point below the target is timed on a fifth of the queries (it can only be an
 *      operating point for a lower recall, where a rough latency does); 'full' walks every series to
 *      saturation;
 *   4. the Pareto front (cheapest first) becomes the manifest's `operatingPoints`, and the search
 *      defaults the cheapest point that reaches `targetRecall` (if none does, the cheapest within the sample's
 *      error of the most accurate one).
 *
 * Every search runs in the native addon's worker threads; this module only times and counts.
 */
import { ParamineError } from '../errors.js';
import { getNumThreads, type SearchResult } from '../native/index.js';
import { exactTopK } from './exact.js';
import {
  type Manifest,
  type OperatingPoint,
  pickOperatingPoint,
  readManifest,
  recallBound,
  type Tuning,
  writeManifest,
} from './manifest.js';
import { ShardedIndex, type ShardSearchParams } from './sharded.js';
import { sampleIds, type VectorSource } from './source.js';
import { VectorFile } from './vectors.js';

/** Operating points are chosen for this recall@10 unless asked otherwise (`paramine index` and `tune`). */
export const DEFAULT_TARGET_RECALL = 0.95;
/** Held-out queries the tuning draws (at least 1,000 for the evidence; fewer for a quick look). */
export const DEFAULT_TUNE_QUERIES = 1000;

export interface TuneOptions {
  /** Held-out queries drawn from the collection (default DEFAULT_TUNE_QUERIES). */
  queries?: number;
  /** Recall is measured at k (default 10). */
  k?: number;
  /** Defaults become the cheapest point reaching it (default DEFAULT_TARGET_RECALL). */
  targetRecall?: number;
  /** Queries timed one at a time for p50 / p99 (default 300, at most `queries`). */
  latencyQueries?: number;
  seed?: number;
  /** Settings swept; defaults follow the index (powers of two up to nlist; kFactor only with a refine). */
  nprobes?: number[];
  kFactors?: number[];
  /** efSearch as multiples of nprobe (HNSW coarse quantizer only; default 1, 2, 4). */
  efFactors?: number[];
  /** 'target' (default): stop each series past the target, time points below it roughly; 'full': everything. */
  sweep?: 'target' | 'full';
  /** Ids that must not be drawn as queries (e.g. another sample kept for checking). */
  avoidIds?: ReadonlySet<number>;
  /** Ids no longer in the collection (deleted sentences): neither queries nor exact neighbours. */
  skipIds?: ReadonlySet<number>;
  /** tuneIndexDir: tune this view of the index (the live one, with the sentences added since its build). */
  view?: TuneView;
  /** Rows per brute-force batch (exact.ts). */
  batchRows?: number;
  onProgress?: (p: { stage: 'truth' | 'sweep'; done: number; total: number }) => void;
  signal?: AbortSignal;
}

/** What is tuned: the built shards, or the live index over them (sealed and growing segments, tombstones). */
export interface Tunable {
  readonly manifest: Manifest;
  readonly dim: number;
  readonly metric: ShardedIndex['metric'];
  search(queries: Float32Array, k: number, params: ShardSearchParams): Promise<SearchResult>;
}

/** An index directory's shards and vectors, put in another view for tuning (the writes made since the build). */
export type TuneView = (
  index: ShardedIndex,
  source: VectorSource,
) => Promise<{ index: Tunable; source: VectorSource; close(): Promise<void> } | undefined>;

export interface TuneResult {
  /** Every setting measured, in sweep order. */
  measured: OperatingPoint[];
  /** The Pareto front, cheapest first. */
  front: OperatingPoint[];
  chosen: OperatingPoint;
  tuning: Tuning;
}

/** Queries that hold out their own id: a seeded sample of ids, avoiding `avoid`. */
export function heldOutIds(n: number, m: number, seed: number, avoid?: ReadonlySet<number>): number[] {
  const want = Math.min(m, n - (avoid?.size ?? 0));
  if (!avoid || avoid.size === 0) return sampleIds(n, want, seed);
  const ids = sampleIds(n, Math.min(n, want + avoid.size), seed).filter((id) => !avoid.has(id));
  return ids.slice(0, want);
}

/** Points no other point beats on both latency (p50) and recall, cheapest first. */
export function paretoFront(points: readonly OperatingPoint[]): OperatingPoint[] {
  const sorted = [...points].sort((a, b) => a.p50Ms - b.p50Ms || b.recall - a.recall);
  const front: OperatingPoint[] = [];
  for (const p of sorted) if (front.length === 0 || p.recall > front[front.length - 1]!.recall) front.push(p);
  return front;
}

/**
 * Share of each exact top-k row found in the approximate one: the mean over queries, and its standard
 * error (how far another sample of queries may land).
 */
export function recallOf(
  exact: BigInt64Array,
  approx: BigInt64Array,
  nq: number,
  k: number,
): { recall: number; stderr: number } {
  let sum = 0;
  let squares = 0;
  let counted = 0;
  for (let q = 0; q < nq; q++) {
    const want = new Set<bigint>();
    for (let j = 0; j < k; j++) {
      const id = exact[q * k + j]!;
      if (id >= 0n) want.add(id);
    }
    if (want.size === 0) continue;
    let hits = 0;
    for (let j = 0; j < k; j++) if (want.has(approx[q * k + j]!)) hits++;
    const r = hits / want.size;
    sum += r;
    squares += r * r;
    counted++;
  }
  if (counted === 0) return { recall: 1, stderr: 0 };
  const mean = sum / counted;
  const variance = counted > 1 ? Math.max(0, (squares - counted * mean * mean) / (counted - 1)) : 0;
  return { recall: mean, stderr: Math.sqrt(variance / counted) };
}

/** k neighbours per query row with its own id dropped (searched k + 1 deep). */
async function searchHeldOut(
  index: Tunable,
  queries: Float32Array,
  ids: readonly number[],
  k: number,
  params: ShardSearchParams,
): Promise<BigInt64Array> {
  const nq = ids.length;
  const r = await index.search(queries, k + 1, params);
  const out = new BigInt64Array(nq * k).fill(-1n);
  for (let q = 0; q < nq; q++) {
    const self = BigInt(ids[q]!);
    let j = 0;
    for (let c = 0; c <= k && j < k; c++) {
      const id = r.ids[q * (k + 1) + c]!;
      if (id !== self && id >= 0n) out[q * k + j++] = id;
    }
  }
  return out;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
}

/** The tuning's warm-up searches at this nprobe (or the grid's largest, if smaller). */
const WARM_NPROBE = 64;
/** A below-target point's latency is rough (a fifth of the queries): it stops a series only this far past the cap. */
const ROUGH_SLACK = 1.25;

interface Grid {
  nprobes: number[];
  kFactors: number[];
  /** undefined: no HNSW quantizer. */
  efFactors: Array<number | undefined>;
}

function gridFor(manifest: Manifest, options: TuneOptions): Grid {
  const nlist = Number(manifest.build.plan && (manifest.build.plan as { nlist?: unknown }).nlist) || 0;
  const lists = nlist > 0 ? nlist : nlistOf(manifest.factory);
  const nprobes = options.nprobes ?? powersUpTo(Math.min(lists, 4096));
  const refined = manifest.search.refine === 'vectors' || /,R/.test(manifest.factory);
  const kFactors = options.kFactors ?? (refined ? [1, 2, 4, 8, 16] : [manifest.search.kFactor]);
  const hnsw = /_HNSW/.test(manifest.factory);
  const efFactors = hnsw ? (options.efFactors ?? [1, 2, 4]) : [undefined];
  return { nprobes, kFactors, efFactors };
}

function nlistOf(factory: string): number {
  return Number(/IVF(\d+)/.exec(factory)?.[1] ?? 1);
}

function powersUpTo(max: number): number[] {
  const out: number[] = [];
  for (let p = 1; p < max; p *= 2) out.push(p);
  out.push(max);
  return out;
}

/**
 * Measures one setting: recall on every query (batched), latency on the first `singles` (one by one), or
 * on `singles / rough` of them when the recall is below `target` (a rough latency will do there).
 */
async function measure(
  index: Tunable,
  queries: Float32Array,
  ids: readonly number[],
  exact: BigInt64Array,
  k: number,
  singles: number,
  params: ShardSearchParams,
  rough: number,
  target: number,
): Promise<OperatingPoint> {
  const approx = await searchHeldOut(index, queries, ids, k, params);
  const { recall, stderr } = recallOf(exact, approx, ids.length, k);
  const dim = index.dim;
  const times: number[] = [];
  const timed = recall < target ? Math.max(Math.min(singles, 20), Math.ceil(singles / rough)) : singles;
  for (let q = 0; q < timed; q++) {
    const t0 = performance.now();
    await index.search(queries.subarray(q * dim, (q + 1) * dim), k + 1, params);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    nprobe: params.nprobe as number,
    ...(params.efSearch === undefined ? {} : { efSearch: params.efSearch }),
    kFactor: params.kFactor as number,
    recall: Math.round(recall * 10_000) / 10_000,
    recallStderr: Math.round(stderr * 100_000) / 100_000,
    p50Ms: round(quantile(times, 0.5)),
    p99Ms: round(quantile(times, 0.99)),
  };
}

/** The sweep (see the module doc) over an open index whose stored vectors are `source`. */
export async function tuneIndex(
  index: Tunable,
  source: VectorSource,
  options: TuneOptions = {},
): Promise<TuneResult> {
  const started = performance.now();
  const manifest = index.manifest;
  const k = options.k ?? 10;
  const target = options.targetRecall ?? DEFAULT_TARGET_RECALL;
  const seed = options.seed ?? 20;
  const avoid = new Set([...(options.avoidIds ?? []), ...(options.skipIds ?? [])]);
  const ids = heldOutIds(source.count, options.queries ?? DEFAULT_TUNE_QUERIES, seed, avoid);
  if (ids.length === 0) throw new ParamineError('BAD_INPUT', 'no queries to tune with', { field: 'queries' });
  const queries = await source.readIds(ids);
  const exact = await exactTopK(source, queries, k, index.metric, {
    excludeIds: ids,
    skipIds: options.skipIds,
    ...(options.batchRows === undefined ? {} : { batchRows: options.batchRows }),
    onProgress: (done, total) => options.onProgress?.({ stage: 'truth', done, total }),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const singles = Math.min(ids.length, options.latencyQueries ?? 300);
  const full = options.sweep === 'full';
  // Past the target by two standard errors of the recall (or 0.005): another query sample still reaches it.
  const past = (p: OperatingPoint) => p.recall - Math.max(2 * (p.recallStderr ?? 0), 0.005) >= target;
  const grid = gridFor(manifest, options);
  const total = grid.nprobes.length * grid.kFactors.length * grid.efFactors.length;
  const measured: OperatingPoint[] = [];
  // Warm-up: first touches of the lists and of vectors.f16 are page faults, not search time. At the
  // nprobe most series stop below (a warm-up at the grid's largest cost 20 s of a 45 s tuning at 10^6).
  const warmProbe = Math.min(grid.nprobes[grid.nprobes.length - 1] ?? 1, WARM_NPROBE);
  await searchHeldOut(index, queries, ids, k, { nprobe: warmProbe, kFactor: Math.max(...grid.kFactors) });
  // And of the single-query path (JIT, thread pool), so the first setting timed is not the slowest.
  for (let q = 0; q < Math.min(singles, 50); q++) {
    await index.search(queries.subarray(q * index.dim, (q + 1) * index.dim), k + 1, { nprobe: 1 });
  }
  let series = 0;
  const seen = new Set<string>();
  // The most accurate series first (largest kFactor and efSearch): the cheapest point past the target
  // found so far caps every later series, since a slower point could only be chosen for more recall.
  let cap = Number.POSITIVE_INFINITY;
  for (const kFactor of [...grid.kFactors].sort((a, b) => b - a)) {
    for (const ef of [...grid.efFactors].sort((a, b) => (b ?? 0) - (a ?? 0))) {
      let previous = -1;
      for (const [i, nprobe] of grid.nprobes.entries()) {
        options.signal?.throwIfAborted();
        const efSearch = ef === undefined ? undefined : Math.max(16, ef * nprobe);
        const params = { nprobe, kFactor, ...(efSearch === undefined ? {} : { efSearch }) };
        const key = `${nprobe}/${kFactor}/${efSearch}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const point = await measure(index, queries, ids, exact, k, singles, params, full ? 1 : 5, target);
        measured.push(point);
        options.onProgress?.({ stage: 'sweep', done: series * grid.nprobes.length + i + 1, total });
        // Saturated: more lists add time, not recall. Or, serving the target: past it (which caps later
        // series), or slower than a point already past it (more lists only add time).
        if (point.recall >= 0.9999 || (nprobe >= 16 && point.recall - previous < 0.0005)) break;
        if (!full && past(point)) cap = Math.min(cap, point.p50Ms);
        if (!full && (past(point) || point.p50Ms > cap * ROUGH_SLACK)) break;
        previous = point.recall;
      }
      options.onProgress?.({ stage: 'sweep', done: ++series * grid.nprobes.length, total });
    }
  }
  const front = paretoFront(measured);
  const chosen = pickOperatingPoint(front, target) as OperatingPoint;
  const tuning: Tuning = {
    k,
    queries: ids.length,
    latencyQueries: singles,
    targetRecall: target,
    reached: recallBound(chosen) >= target,
    seed,
    settings: measured.length,
    threads: getNumThreads().omp,
    ms: Math.round(performance.now() - started),
    measuredAt: new Date().toISOString(),
  };
  return { measured, front, chosen, tuning };
}

/** The manifest with the tuning's operating points, and search defaults at its chosen point. */
export function withOperatingPoints(manifest: Manifest, result: TuneResult): Manifest {
  const { chosen } = result;
  const { efSearch: _ef, ...search } = manifest.search;
  return {
    ...manifest,
    search: {
      ...search,
      nprobe: chosen.nprobe,
      kFactor: chosen.kFactor,
      ...(chosen.efSearch === undefined ? {} : { efSearch: chosen.efSearch }),
    },
    operatingPoints: result.front,
    tuning: result.tuning,
  };
}

/** Whether tuning means anything for this index (Flat is exact: recall 1 at any setting). */
export function tunable(manifest: Manifest): boolean {
  return /IVF\d/.test(manifest.factory);
}

/**
 * Tunes the index in `dir` (opened as it is served) against its vectors.f16 and rewrites its manifest
 * (atomically) with the operating points and the new defaults.
 */
export async function tuneIndexDir(dir: string, options: TuneOptions = {}): Promise<TuneResult> {
  const manifest = await readManifest(dir);
  if (!tunable(manifest)) {
    throw new ParamineError('BAD_INPUT', `${dir} holds a ${manifest.factory} index: exact, nothing to tune`, {
      field: 'index',
    });
  }
  const source = await VectorFile.open(dir);
  if (!source) {
    throw new ParamineError(
      'BAD_INPUT',
      `${dir} keeps no vectors.f16 (built with --vectors none): tuning draws its queries and exact ` +
        'neighbours from them',
      { field: 'index' },
    );
  }
  try {
    const index = await ShardedIndex.open(dir);
    try {
      const view = await options.view?.(index, source);
      try {
        const result = await tuneIndex(view?.index ?? index, view?.source ?? source, options);
        await writeManifest(dir, withOperatingPoints(await readManifest(dir), result));
        return result;
      } finally {
        await view?.close();
      }
    } finally {
      await index.close();
    }
  } finally {
    await source.close();
  }
}

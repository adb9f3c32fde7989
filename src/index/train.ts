/**
 * Build phase 1: train an empty index once (every shard and every distributed fill job clones it).
 *
 *   const index = await trainIndex({ plan, dim, metric, source, sampleIds, onProgress });
 *   await index.write('trained.faiss');   // fill.ts clones it per piece
 *
 * IVF factories train step by step over the addon (src/native/train.cc): the raw-vector stages (OPQ,
 * refine codes) on a subsample, then the coarse centroids by k-means in the IVF layer's space, then the
 * PQ codebooks on residuals. From TWO_LEVEL_MIN_NLIST lists on, k-means runs in two levels (FAISS's
 * contrib/clustering.py): sqrt(nlist) groups on a subsample, every sample point assigned to a group, then
 * each group clustered into its share of the lists - sqrt(nlist) times less work than one k-means over
 * nlist centroids (65,536 lists: minutes instead of most of a day on two cores). The sample is never held
 * whole: points are read group by group from the source, so memory stays at one group.
 */
import { ParamineError } from '../errors.js';
import {
  createIndex,
  type FaissIndex,
  getNumThreads,
  kmeans,
  type Metric,
  setNumThreads,
} from '../native/index.js';
import type { IndexPlan } from './plan.js';
import { spread, type VectorSource } from './source.js';

export type TrainStage = 'input' | 'assign' | 'level1' | 'groups' | 'quantizer' | 'codes' | 'faiss';

export interface TrainProgress {
  stage: TrainStage;
  done: number;
  total: number;
}

export interface TrainOptions {
  plan: Pick<IndexPlan, 'factory' | 'kind' | 'nlist' | 'training'>;
  dim: number;
  metric: Metric;
  source: VectorSource;
  /** Sorted ids of the training sample (uniform over the source: see sampleIds). */
  sampleIds: readonly number[];
  /** Lloyd iterations per k-means (default 20). */
  niter?: number;
  seed?: number;
  /** Most bytes of float32 vectors held at once (default 1 GiB): bounds a group, a batch, a subsample. */
  memoryBytes?: number;
  /** Threads for training (k-means is BLAS-bound): OpenMP and OpenBLAS; restored afterwards. */
  threads?: number;
  /** Force one-level or two-level k-means (default: the plan's choice). */
  twoLevel?: boolean;
  onProgress?: (p: TrainProgress) => void;
}

/** Most points FAISS's k-means uses per centroid (it subsamples beyond). */
const MAX_POINTS_PER_CENTROID = 256;
/** Raw-vector stages (OPQ: 256 x 256 points) and PQ codebooks (256 per centroid) need no more. */
const SUBSAMPLE = 65_536;
const DEFAULT_MEMORY = 2 ** 30;

/** Trains `plan.factory` on the sample; resolves to the trained, empty index. */
export async function trainIndex(o: TrainOptions): Promise<FaissIndex> {
  const index = createIndex(o.plan.factory, o.dim, o.metric);
  const saved = getNumThreads();
  if (o.threads !== undefined) setNumThreads(o.threads, o.threads);
  try {
    if (index.isTrained) return index;
    if (index.nlist === null) await trainWhole(index, o);
    else await trainSteps(index, o);
    return index;
  } catch (e) {
    await index.close();
    throw e;
  } finally {
    setNumThreads(saved.omp, saved.blas);
  }
}

/** Factories without an IVF layer: FAISS's own train() on (a memory-bounded part of) the sample. */
async function trainWhole(index: FaissIndex, o: TrainOptions): Promise<void> {
  const ids = spread(o.sampleIds, maxRows(o, o.dim));
  o.onProgress?.({ stage: 'faiss', done: 0, total: 1 });
  await index.train(await o.source.readIds(ids));
  o.onProgress?.({ stage: 'faiss', done: 1, total: 1 });
}

function maxRows(o: TrainOptions, dim: number): number {
  return Math.max(1, Math.floor((o.memoryBytes ?? DEFAULT_MEMORY) / (4 * dim)));
}

async function trainSteps(index: FaissIndex, o: TrainOptions): Promise<void> {
  const nlist = index.nlist as number;
  if (o.sampleIds.length < nlist) {
    throw new ParamineError(
      'BAD_INPUT',
      `${o.sampleIds.length} training vectors for ${nlist} lists; need at least one per list (fewer lists, or more vectors)`,
      { field: 'factory' },
    );
  }
  const sub = spread(o.sampleIds, Math.min(SUBSAMPLE, maxRows(o, o.dim)));
  const subVectors = await o.source.readIds(sub);
  o.onProgress?.({ stage: 'input', done: 0, total: 1 });
  await index.trainInputStages(subVectors);
  o.onProgress?.({ stage: 'input', done: 1, total: 1 });
  const twoLevel = o.twoLevel ?? o.plan.training === 'two-level';
  const centroids = twoLevel
    ? await twoLevelCentroids(index, o, nlist)
    : await oneLevelCentroids(index, o, nlist);
  o.onProgress?.({ stage: 'quantizer', done: 0, total: 1 });
  await index.setCentroids(centroids);
  o.onProgress?.({ stage: 'quantizer', done: 1, total: 1 });
  o.onProgress?.({ stage: 'codes', done: 0, total: 1 });
  await index.trainCodes(index.preTransform ? await index.applyPreTransform(subVectors) : subVectors);
  o.onProgress?.({ stage: 'codes', done: 1, total: 1 });
}

/** Points of `ids` in the IVF layer's space, read in memory-bounded batches. */
async function coarseVectors(
  index: FaissIndex,
  o: TrainOptions,
  ids: readonly number[],
): Promise<Float32Array> {
  const raw = await o.source.readIds(ids);
  return index.preTransform ? index.applyPreTransform(raw) : raw;
}

async function oneLevelCentroids(index: FaissIndex, o: TrainOptions, nlist: number): Promise<Float32Array> {
  const m = Math.min(o.sampleIds.length, nlist * MAX_POINTS_PER_CENTROID, maxRows(o, o.dim));
  const points = await coarseVectors(index, o, spread(o.sampleIds, m));
  o.onProgress?.({ stage: 'groups', done: 0, total: 1 });
  const c = await kmeans(points, index.coarseDim, nlist, kmeansOptions(o, 0));
  o.onProgress?.({ stage: 'groups', done: 1, total: 1 });
  return c;
}

/** The seed of training samples and k-means when none is given: one for the build, rebuilds, fills and domains. */
export const DEFAULT_SEED = 1234;

function kmeansOptions(o: TrainOptions, salt: number) {
  return {
    niter: o.niter ?? 20,
    seed: ((o.seed ?? DEFAULT_SEED) + salt * 7919) % 2 ** 30,
    spherical: o.metric === 'ip',
  };
}

/**
 * Lists per group, proportional to the group's share of the sample (clustering.py's rebalance), summing
 * to nlist, at least one for a non-empty group and never more than its points.
 */
export function allocateLists(groupSizes: readonly number[], nlist: number): number[] {
  const total = groupSizes.reduce((a, b) => a + b, 0);
  const out = groupSizes.map((s) =>
    s === 0 ? 0 : Math.min(s, Math.max(1, Math.floor((s * nlist) / total))),
  );
  let left = nlist - out.reduce((a, b) => a + b, 0);
  // Hand out (or take back) the rounding remainder, largest groups first.
  const order = groupSizes
    .map((_, i) => i)
    .sort((a, b) => (groupSizes[b] as number) - (groupSizes[a] as number));
  for (let pass = 0; left !== 0 && pass < nlist; pass++) {
    for (const g of order) {
      if (left === 0) break;
      const room = (groupSizes[g] as number) - (out[g] as number);
      if (left > 0 && room > 0) {
        out[g] = (out[g] as number) + 1;
        left--;
      } else if (left < 0 && (out[g] as number) > 1) {
        out[g] = (out[g] as number) - 1;
        left++;
      }
    }
  }
  if (left !== 0) throw new ParamineError('BAD_INPUT', `cannot spread ${nlist} lists over ${total} points`);
  return out;
}

async function twoLevelCentroids(index: FaissIndex, o: TrainOptions, nlist: number): Promise<Float32Array> {
  const d = index.coarseDim;
  const groups = Math.max(1, Math.round(Math.sqrt(nlist)));
  // Level 1: sqrt(nlist) centroids from a subsample.
  const level1Ids = spread(o.sampleIds, Math.min(groups * MAX_POINTS_PER_CENTROID, maxRows(o, o.dim)));
  o.onProgress?.({ stage: 'level1', done: 0, total: 1 });
  const c1 = await kmeans(await coarseVectors(index, o, level1Ids), d, groups, kmeansOptions(o, 0));
  o.onProgress?.({ stage: 'level1', done: 1, total: 1 });
  const group = await assignGroups(index, o, c1, groups);
  const members: number[][] = Array.from({ length: groups }, () => []);
  o.sampleIds.forEach((id, i) => {
    members[group[i] as number]?.push(id);
  });
  const lists = allocateLists(
    members.map((m) => m.length),
    nlist,
  );
  // Level 2: each group into its share of the lists; ids stay ascending within a group (cheap reads).
  const out = new Float32Array(nlist * d);
  const total = o.sampleIds.length;
  /** The points of the first group from `from` on that gets lists, being read. */
  const readFrom = (from: number) => {
    for (let g = from; g < groups; g++) {
      const k = lists[g] as number;
      const ids = members[g] as number[];
      if (k === 0) continue;
      // Half the memory each: the next group's points are held beside this one's.
      const m = Math.min(
        ids.length,
        k * MAX_POINTS_PER_CENTROID,
        Math.max(k, Math.floor(maxRows(o, o.dim) / 2)),
      );
      const points = coarseVectors(index, o, spread(ids, m));
      points.catch(() => undefined);
      return { g, points };
    }
    return undefined;
  };
  let ahead = readFrom(0);
  let at = 0;
  let done = 0;
  o.onProgress?.({ stage: 'groups', done: 0, total });
  for (let g = 0; g < groups; g++) {
    const k = lists[g] as number;
    if (k > 0 && ahead?.g === g) {
      const clustering = kmeans(await ahead.points, d, k, kmeansOptions(o, g + 1));
      // The next group's points are read (a document index projects them on this thread) during the k-means.
      ahead = readFrom(g + 1);
      out.set(await clustering, at * d);
      at += k;
    }
    done += (members[g] as number[]).length;
    o.onProgress?.({ stage: 'groups', done, total });
  }
  return out;
}

/** Level-1 group of every sample point: nearest of the sqrt(nlist) centroids, in memory-bounded batches. */
async function assignGroups(
  index: FaissIndex,
  o: TrainOptions,
  c1: Float32Array,
  groups: number,
): Promise<Int32Array> {
  const flat = createIndex('Flat', index.coarseDim, o.metric);
  try {
    await flat.add(
      c1,
      BigInt64Array.from({ length: groups }, (_, i) => BigInt(i)),
    );
    const out = new Int32Array(o.sampleIds.length);
    // Half the memory each: the next batch is read while this one is searched.
    const batch = Math.min(65_536, Math.max(1, Math.floor(maxRows(o, o.dim) / 2)));
    o.onProgress?.({ stage: 'assign', done: 0, total: o.sampleIds.length });
    const read = (s: number) => {
      const points = coarseVectors(index, o, o.sampleIds.slice(s, s + batch));
      points.catch(() => undefined);
      return points;
    };
    let points = read(0);
    for (let s = 0; s < o.sampleIds.length; s += batch) {
      const searching = flat.search(await points, 1);
      // The next batch is read while this one is searched.
      if (s + batch < o.sampleIds.length) points = read(s + batch);
      const { ids: nearest } = await searching;
      const count = Math.min(batch, o.sampleIds.length - s);
      for (let i = 0; i < count; i++) out[s + i] = Number(nearest[i]);
      o.onProgress?.({ stage: 'assign', done: s + count, total: o.sampleIds.length });
    }
    return out;
  } finally {
    await flat.close();
  }
}

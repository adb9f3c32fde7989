/**
 * Choosing a FAISS factory string from collection size and dimension. The choice (and why) goes into the
 * manifest so a built index says how it was made.
 */
import { ParamineError } from '../errors.js';

export type RefineKind = 'none' | 'sq8' | 'flat';

export interface FactoryOptions {
  /** Vectors the index will hold. */
  n: number;
  dim: number;
  /** Up to this many vectors exact search is used (default 100,000: ~150 MB at d = 384, a few ms/query). */
  flatMax?: number;
  /**
   * Re-score the coarse candidates with finer codes: 'sq8' (dim bytes/vector, default), 'flat' (exact,
   * 4*dim bytes/vector) or 'none' (PQ codes only: ~dim/8 bytes/vector, but loose top-10 ordering).
   */
  refine?: RefineKind;
  /** 4-bit fast-scan PQ codes instead of 8-bit PQ (same bytes per vector, faster to train, coarser). */
  fastScan?: boolean;
  /** Most training vectors the indexer will sample (memory and k-means time); default 262,144. */
  maxTrainingVectors?: number;
}

export interface FactoryPlan {
  factory: string;
  kind: 'flat' | 'ivf-pq';
  /** IVF lists (0 for flat). */
  nlist: number;
  /** PQ sub-quantizers and bits per code (0 for flat). */
  pqM: number;
  pqBits: number;
  refine: RefineKind;
  /** Vectors to train on (0: no training needed). At least 39 per IVF list, as FAISS asks. */
  trainSize: number;
  /** Search defaults recorded in the manifest. */
  search: { nprobe: number; kFactor: number };
  reason: string;
}

export const MIN_POINTS_PER_CENTROID = 39;
const DEFAULT_FLAT_MAX = 100_000;
const DEFAULT_MAX_TRAINING = 262_144;
/** Training sample per list: k-means gains little beyond ~50 points per centroid. */
const TRAIN_PER_LIST = 50;

function positiveInt(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new ParamineError('BAD_INPUT', `${field} must be a positive integer`, { field });
  }
  return value;
}

/** Largest divisor of `dim` not above `target` (PQ sub-vectors must tile the vector exactly). */
export function pqSubquantizers(dim: number, target: number): number {
  for (let m = Math.max(1, Math.floor(target)); m > 1; m--) if (dim % m === 0) return m;
  return 1;
}

/** Largest power of two not above x (x >= 1). */
function floorPow2(x: number): number {
  return 2 ** Math.floor(Math.log2(Math.max(1, x)));
}

/**
 * Flat below `flatMax`; above, `IVF{nlist},PQ{m}np[,Refine]`:
 * - nlist: the power of two at or below 8*sqrt(n) (so within FAISS's 4..16*sqrt(n) guidance), lowered
 *   until the training sample holds >= 39 points per list;
 * - PQ m: the largest divisor of dim up to dim/8 (PQ48 for 384: one byte per 8 dimensions);
 * - `np`: no polysemous training (FAISS turns it on for PQ; it is slow and unused here);
 * - refine 'sq8' by default: PQ codes alone order a neighbourhood loosely (recall@10 ~0.7 on clustered
 *   384-d data), re-scoring k*kFactor candidates with 8-bit scalar codes brings it to ~0.99.
 */
export function chooseFactory(options: FactoryOptions): FactoryPlan {
  const n = positiveInt(options.n, 'n');
  const dim = positiveInt(options.dim, 'dim');
  const flatMax = options.flatMax ?? DEFAULT_FLAT_MAX;
  const refine = options.refine ?? 'sq8';
  const maxTrain = positiveInt(options.maxTrainingVectors ?? DEFAULT_MAX_TRAINING, 'maxTrainingVectors');

  const budget = Math.min(n, maxTrain);
  const cap = Math.floor(budget / MIN_POINTS_PER_CENTROID);
  if (n <= flatMax || cap < 16) {
    return {
      factory: 'Flat',
      kind: 'flat',
      nlist: 0,
      pqM: 0,
      pqBits: 0,
      refine: 'none',
      trainSize: 0,
      search: { nprobe: 1, kFactor: 1 },
      reason: `n = ${n} <= ${flatMax}: exact search is affordable`,
    };
  }

  const nlist = floorPow2(Math.min(8 * Math.sqrt(n), cap));
  const trainSize = Math.min(budget, TRAIN_PER_LIST * nlist);
  // Fast scan packs two 4-bit codes per byte: twice the sub-quantizers for the same bytes per vector.
  const bytes = pqSubquantizers(dim, dim / 8);
  const fastScan = options.fastScan === true && dim % (2 * bytes) === 0;
  const pqM = fastScan ? 2 * bytes : bytes;
  const pq = fastScan ? `PQ${pqM}x4fs` : `PQ${pqM}np`;
  const refineSuffix = refine === 'flat' ? ',RFlat' : refine === 'sq8' ? ',Refine(SQ8)' : '';
  return {
    factory: `IVF${nlist},${pq}${refineSuffix}`,
    kind: 'ivf-pq',
    nlist,
    pqM,
    pqBits: fastScan ? 4 : 8,
    refine,
    trainSize,
    search: { nprobe: Math.min(nlist, 32), kFactor: refine === 'none' ? 1 : 8 },
    reason:
      `n = ${n} > ${flatMax}: IVF-PQ; nlist ${nlist} (${(nlist / Math.sqrt(n)).toFixed(1)}*sqrt(n), ` +
      `${Math.floor(trainSize / nlist)} training points per list); ${pqM} x ${fastScan ? 4 : 8}-bit PQ codes ` +
      `(${(pqM * (fastScan ? 4 : 8)) / 8} bytes/vector)` +
      (refine === 'none'
        ? '; no refine stage'
        : `; refine with ${refine === 'flat' ? 'exact vectors' : 'SQ8 codes'}`),
  };
}

/**
 * Choosing the index for a collection (`--factory auto`), from its size up to 10^9 vectors, along FAISS's
 * guidance ("Guidelines to choose an index", "Indexing 1G vectors"):
 *
 *   n <= flatMax (100k)   Flat: exact search is affordable
 *   n < 10^6              IVF{~8 sqrt(n)},PQ     flat coarse quantizer (nlist <= 8192: a scan of it is cheap)
 *   10^6 .. 10^7          IVF65536_HNSW32,PQ     an HNSW graph finds the nprobe nearest of many lists
 *   10^7 .. 10^8          IVF262144_HNSW32,PQ
 *   above                 IVF1048576_HNSW32,PQ
 *
 * nlist is also held to <= n / 40 (FAISS wants >= 39 training points a list), so a collection just past a
 * boundary gets the largest power of two it can train. PQ: one byte per 8 dimensions, no polysemous
 * training (`np`). Refine: the exact vectors re-read from the memory-mapped vectors.f16 when the index
 * keeps them (no RAM), else SQ8 codes in RAM up to 5M vectors (dim bytes each: 2 GB at 5M x 384, 7x
 * the PQ code), else none, with an OPQ rotation then, since PQ codes are the final scores.
 *
 * The choice, its cost (cost.ts) and its reasons go into the manifest. Search defaults (nprobe, the HNSW
 * quantizer's efSearch, kFactor) are set per nlist.
 */
import { ParamineError } from '../errors.js';
import { withBudget } from './budget.js';
import { formatBytes, type IndexShape, indexCost, type RefineKind } from './cost.js';
import type { IndexPlan, SearchDefaults } from './plan.js';

export type { RefineKind } from './cost.js';

export interface FactoryOptions {
  /** Vectors the index will hold. */
  n: number;
  dim: number;
  metric?: 'ip' | 'l2';
  /** Up to this many vectors exact search is used (default 100,000: ~150 MB at d = 384, a few ms/query). */
  flatMax?: number;
  /** The build keeps vectors.f16 (default false): enables the 'vectors' refine at no RAM cost. */
  vectorsKept?: boolean;
  /** Refine stage; default: 'vectors' when kept, else 'sq8' up to 5M vectors, else 'none'. */
  refine?: RefineKind;
  /** 4-bit fast-scan PQ codes instead of 8-bit PQ (same bytes per vector, faster to train, coarser). */
  fastScan?: boolean;
  /** OPQ rotation before PQ; default: only when PQ codes are the final scores (no refine). */
  opq?: boolean;
  /** Training points per list (default 40; FAISS asks 30..256). */
  trainPointsPerList?: number;
  /** Most training vectors (time of k-means); default: none beyond n and trainPointsPerList * nlist. */
  maxTrainingVectors?: number;
  /** RAM the serving process may spend on the index (bytes): plans above it are skipped (see cost.ts). */
  maxRamBytes?: number;
}

export type { IndexPlan, SearchDefaults } from './plan.js';

/** Kept for callers of the earlier name. */
export type FactoryPlan = IndexPlan;

export const MIN_POINTS_PER_CENTROID = 39;
const DEFAULT_FLAT_MAX = 100_000;
const DEFAULT_POINTS_PER_LIST = 40;
export const HNSW_MIN_N = 1_000_000;
const HNSW_M = 32;
/** Above this many vectors SQ8 refine codes in RAM cost more than they are worth (see the module doc). */
export const SQ8_MAX_N = 5_000_000;
/** From this many lists on, one k-means run over nlist centroids is too slow on CPUs: two levels. */
export const TWO_LEVEL_MIN_NLIST = 8192;

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

/** FAISS's list count for an HNSW-quantized IVF of n vectors. */
function guidedNlist(n: number): number {
  if (n <= 10_000_000) return 65_536;
  if (n <= 100_000_000) return 262_144;
  return 1_048_576;
}

/**
 * Search defaults per nlist. Flat quantizer: 32 lists (1.6% of 2048). HNSW quantizer: ~sqrt(nlist)/2
 * lists (128 of 65,536; Deep1B used 100 of 1M), the graph searched with twice as many candidates.
 */
export function searchDefaults(
  nlist: number,
  quantizer: 'flat' | 'hnsw',
  refine: RefineKind,
): SearchDefaults {
  const kFactor = refine === 'none' ? 1 : 8;
  const base: SearchDefaults = { nprobe: Math.min(nlist, 32), kFactor };
  if (quantizer === 'hnsw') {
    const nprobe = Math.min(nlist, Math.max(32, Math.min(1024, floorPow2(Math.sqrt(nlist) / 2))));
    Object.assign(base, { nprobe, efSearch: 2 * nprobe });
  }
  if (refine === 'vectors') base.refine = 'vectors';
  return base;
}

/** The factory string of a shape (the 'vectors' refine is outside FAISS: no suffix). */
export function factoryString(s: IndexShape, fastScan = false): string {
  if (s.kind === 'flat') return 'Flat';
  const opq = s.opq > 0 ? `OPQ${s.opq},` : '';
  const ivf = s.quantizer === 'hnsw' ? `IVF${s.nlist}_HNSW${s.hnswM}` : `IVF${s.nlist}`;
  const pq = fastScan ? `PQ${s.pqM}x4fs` : `PQ${s.pqM}np`;
  const refine = s.refine === 'flat' ? ',RFlat' : s.refine === 'sq8' ? ',Refine(SQ8)' : '';
  return `${opq}${ivf},${pq}${refine}`;
}

function flatPlan(n: number, dim: number, metric: 'ip' | 'l2', reason: string): IndexPlan {
  const shape: IndexShape = {
    kind: 'flat',
    dim,
    metric,
    opq: 0,
    nlist: 0,
    quantizer: 'flat',
    hnswM: 0,
    pqM: 0,
    pqBits: 0,
    refine: 'none',
  };
  return {
    ...shape,
    kind: 'flat',
    factory: 'Flat',
    trainSize: 0,
    training: 'none',
    search: { nprobe: 1, kFactor: 1 },
    cost: indexCost(shape, n),
    reasons: [reason],
    reason,
  };
}

/** Chooses the index for `n` vectors (see the module doc); refuses when no plan fits maxRamBytes. */
export function chooseFactory(options: FactoryOptions): IndexPlan {
  const n = positiveInt(options.n, 'n');
  const dim = positiveInt(options.dim, 'dim');
  const metric = options.metric ?? 'ip';
  const flatMax = options.flatMax ?? DEFAULT_FLAT_MAX;
  const perList = positiveInt(options.trainPointsPerList ?? DEFAULT_POINTS_PER_LIST, 'trainPointsPerList');
  const maxTrain = Math.min(n, positiveInt(options.maxTrainingVectors ?? n, 'maxTrainingVectors'));
  const plans: IndexPlan[] = [];
  const cap = floorPow2(maxTrain / Math.max(perList, MIN_POINTS_PER_CENTROID));
  const budget = options.maxRamBytes;
  if (n <= flatMax || cap < 16) {
    plans.push(flatPlan(n, dim, metric, `n = ${n} <= ${flatMax}: exact search is affordable`));
  }
  // Under a budget Flat may not fit a small collection either: IVF-PQ is the fallback then.
  if (cap >= 16 && (n > flatMax || budget !== undefined)) {
    plans.push(...ivfPlans(n, dim, metric, options, perList, maxTrain, cap, budget !== undefined));
  }
  if (budget === undefined) return plans[0]!;
  const fits = plans.find((p) => p.cost.total.ram <= budget);
  const skipped = plans
    .filter((p) => p.cost.total.ram > budget)
    .map(
      (p) => `${p.factory}${p.refine === 'sq8' ? ' + SQ8 refine' : ''} (${formatBytes(p.cost.total.ram)})`,
    );
  if (fits) return withBudget(fits, n, budget, fits === plans[0] ? [] : skipped);
  const least = Math.min(...plans.map((p) => p.cost.total.ram));
  throw new ParamineError(
    'OVER_BUDGET',
    `no index for ${n} ${dim}-d vectors fits in ${formatBytes(budget)} of RAM; the smallest ` +
      `(${plans.find((p) => p.cost.total.ram === least)?.factory}) needs ${formatBytes(least)}: ` +
      `give --max-ram ${Math.ceil(least / 1e6)}MB or more`,
    { field: 'maxRam' },
  );
}

/**
 * The IVF-PQ candidates, best expected recall first: the default shape; then, under a budget and
 * without kept vectors (PQ scores final), finer PQ codes (d/2, d/3, d/4 bytes); the default codes without
 * an in-RAM refine (sq8/flat); PQ codes halved down to 8 bytes a vector. Each is re-scored from the
 * memory-mapped vectors.f16 when it is kept (no RAM), else OPQ-rotated.
 */
function ivfPlans(
  n: number,
  dim: number,
  metric: 'ip' | 'l2',
  options: FactoryOptions,
  perList: number,
  maxTrain: number,
  cap: number,
  budgeted: boolean,
): IndexPlan[] {
  const first = ivfPlan(n, dim, metric, options, perList, maxTrain, cap);
  if (!budgeted) return [first];
  const plans = [first];
  const cheap: RefineKind = options.vectorsKept ? 'vectors' : 'none';
  const lean = { ...options, refine: cheap };
  const bytes0 = (first.pqM * first.pqBits) / 8;
  // Without kept vectors the PQ codes are the final scores: finer codes first, where the budget has room.
  if (!options.vectorsKept && !options.fastScan) {
    const finer = new Set([dim / 2, dim / 3, dim / 4].map((b) => pqSubquantizers(dim, b)));
    for (const bytes of [...finer].filter((b) => b > bytes0).sort((a, b) => b - a)) {
      plans.push(ivfPlan(n, dim, metric, lean, perList, maxTrain, cap, bytes));
    }
  }
  if (first.refine !== cheap) plans.push(ivfPlan(n, dim, metric, lean, perList, maxTrain, cap));
  for (let bytes = bytes0 / 2; bytes >= 8; bytes /= 2) {
    plans.push(ivfPlan(n, dim, metric, lean, perList, maxTrain, cap, bytes));
  }
  return plans;
}

function ivfPlan(
  n: number,
  dim: number,
  metric: 'ip' | 'l2',
  options: FactoryOptions,
  perList: number,
  maxTrain: number,
  cap: number,
  pqBytes?: number,
): IndexPlan {
  const reasons: string[] = [];
  const hnsw = n >= HNSW_MIN_N;
  const wanted = hnsw ? guidedNlist(n) : Math.min(8192, floorPow2(8 * Math.sqrt(n)));
  const nlist = Math.max(16, Math.min(wanted, cap));
  reasons.push(
    hnsw
      ? `n = ${n} >= ${HNSW_MIN_N}: IVF with an HNSW${HNSW_M} coarse quantizer, nlist ${nlist} ` +
          `(FAISS's ${wanted} for this size${nlist < wanted ? `, held to the ${maxTrain} training vectors / ${perList}` : ''})`
      : `n = ${n}: IVF with a flat coarse quantizer, nlist ${nlist} (${(nlist / Math.sqrt(n)).toFixed(1)} sqrt(n))`,
  );
  const trainSize = Math.min(maxTrain, perList * nlist);
  const training = nlist >= TWO_LEVEL_MIN_NLIST ? 'two-level' : 'kmeans';
  reasons.push(
    `train on ${trainSize} vectors (${Math.floor(trainSize / nlist)} a list)` +
      (training === 'two-level'
        ? `, two-level k-means (${Math.round(Math.sqrt(nlist))} groups, then each group)`
        : ''),
  );
  const bytes = pqBytes ?? pqSubquantizers(dim, dim / 8);
  const fastScan = options.fastScan === true && dim % (2 * bytes) === 0;
  const pqM = fastScan ? 2 * bytes : pqSubquantizers(dim, bytes);
  const refine: RefineKind =
    options.refine ?? (options.vectorsKept ? 'vectors' : n <= SQ8_MAX_N ? 'sq8' : 'none');
  reasons.push(
    `${pqM} x ${fastScan ? 4 : 8}-bit PQ codes (${(pqM * (fastScan ? 4 : 8)) / 8} bytes a vector)`,
    refine === 'vectors'
      ? 'refine: exact cosine from the memory-mapped vectors.f16 (no RAM)'
      : refine === 'sq8'
        ? `refine: SQ8 codes in RAM (${dim} bytes a vector; n <= ${SQ8_MAX_N})`
        : refine === 'flat'
          ? 'refine: exact float32 vectors in RAM'
          : 'no refine stage (PQ scores are final)',
  );
  const opq = (options.opq ?? refine === 'none') && !fastScan ? pqM : 0;
  if (opq > 0) reasons.push(`OPQ${opq} rotation: balances the PQ sub-spaces`);
  const shape: IndexShape = {
    kind: 'ivf-pq',
    dim,
    metric,
    opq,
    nlist,
    quantizer: hnsw ? 'hnsw' : 'flat',
    hnswM: hnsw ? HNSW_M : 0,
    pqM,
    pqBits: fastScan ? 4 : 8,
    refine,
  };
  const search = searchDefaults(nlist, shape.quantizer, refine);
  const cost = indexCost(shape, n, { keptVectors: options.vectorsKept === true });
  reasons.push(
    `search: nprobe ${search.nprobe}${search.efSearch ? `, efSearch ${search.efSearch}` : ''}, kFactor ${search.kFactor}`,
    `RAM ${formatBytes(cost.total.ram)} (${cost.perVector.ram} B a vector + ${formatBytes(cost.fixed.ram)}), ` +
      `disk ${formatBytes(cost.total.disk)}, memory-mapped ${formatBytes(cost.total.mapped)}`,
  );
  return {
    ...shape,
    kind: 'ivf-pq',
    factory: factoryString(shape, fastScan),
    trainSize,
    training,
    search,
    cost,
    reasons,
    reason: reasons.join('; '),
  };
}

const FACTORY_RE =
  /^(?:OPQ(\d+)(?:_(\d+))?,)?IVF(\d+)(?:_HNSW(\d*))?,(?:PQ(\d+)(?:x(\d+))?(np|fs|fsr)?|(SQ8|SQfp16|Flat))(?:,(RFlat|Refine\(SQ8\)|Refine\(Flat\)))?$/;

/**
 * The plan for a factory string the user gave (`--factory`): its shape when it is one of the IVF forms
 * above (so training, cost and search defaults follow the same rules), else kind 'other' (trained by
 * FAISS's own train() on a sample of up to 65,536 vectors).
 */
export function planForFactory(
  factory: string,
  options: Pick<
    FactoryOptions,
    'n' | 'dim' | 'metric' | 'trainPointsPerList' | 'maxTrainingVectors' | 'vectorsKept'
  > & {
    refine?: RefineKind;
  },
): IndexPlan {
  const n = positiveInt(options.n, 'n');
  const dim = positiveInt(options.dim, 'dim');
  const metric = options.metric ?? 'ip';
  if (/^(IDMap,)?Flat$/.test(factory)) return { ...flatPlan(n, dim, metric, 'given'), factory };
  const perList = options.trainPointsPerList ?? DEFAULT_POINTS_PER_LIST;
  const maxTrain = Math.min(n, options.maxTrainingVectors ?? n);
  const m = FACTORY_RE.exec(factory);
  if (!m || (m[2] !== undefined && Number(m[2]) !== dim)) {
    const shape: IndexShape = { ...flatPlan(n, dim, metric, ''), kind: 'other' };
    const trainSize = Math.min(maxTrain, 65_536);
    return {
      ...shape,
      factory,
      trainSize,
      training: 'kmeans',
      search: { nprobe: 1, kFactor: /,R/.test(factory) ? 8 : 1 },
      cost: indexCost(shape, n),
      reasons: [`given factory; FAISS trains it on ${trainSize} vectors`],
      reason: `given factory; FAISS trains it on ${trainSize} vectors`,
    };
  }
  const nlist = Number(m[3]);
  const suffix = m[9];
  const refine: RefineKind =
    suffix === 'RFlat' || suffix === 'Refine(Flat)'
      ? 'flat'
      : suffix === 'Refine(SQ8)'
        ? 'sq8'
        : (options.refine ?? (options.vectorsKept ? 'vectors' : 'none'));
  const other = m[8];
  const shape: IndexShape = {
    kind: 'ivf-pq',
    dim,
    metric,
    opq: m[1] ? Number(m[1]) : 0,
    nlist,
    quantizer: m[4] !== undefined ? 'hnsw' : 'flat',
    hnswM: m[4] !== undefined ? Number(m[4] || 32) : 0,
    // SQ8 / SQfp16 / Flat inverted lists: their code size expressed as 8-bit "sub-quantizers".
    pqM: other === 'SQ8' ? dim : other === 'SQfp16' ? 2 * dim : other === 'Flat' ? 4 * dim : Number(m[5]),
    pqBits: other ? 8 : Number(m[6] ?? 8),
    refine,
  };
  // Flat and SQ inverted lists have no codebook worth the PQ sample; k-means still needs its points.
  const trainSize = Math.min(maxTrain, Math.max(perList * nlist, other ? 0 : 10_000));
  const training = nlist >= TWO_LEVEL_MIN_NLIST ? 'two-level' : 'kmeans';
  const search = searchDefaults(nlist, shape.quantizer, refine);
  const cost = indexCost(shape, n, { keptVectors: options.vectorsKept === true });
  const reasons = [
    `given factory; train on ${trainSize} vectors (${Math.floor(trainSize / nlist)} a list)` +
      (training === 'two-level' ? ', two-level k-means' : ''),
    `search: nprobe ${search.nprobe}${search.efSearch ? `, efSearch ${search.efSearch}` : ''}, kFactor ${search.kFactor}`,
  ];
  return { ...shape, factory, trainSize, training, search, cost, reasons, reason: reasons.join('; ') };
}

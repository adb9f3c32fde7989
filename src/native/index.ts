/**
 * Typed face of the FAISS addon (src/native/*.cc). Every method that touches FAISS runs off the event loop
 * and returns a Promise; every failure is a ParamineError with a stable code.
 *
 * Concurrency: searches and writes on one index run in parallel; train, add and merge take the index
 * exclusively; close() waits for accepted operations and rejects later ones with INDEX_CLOSED.
 * Arrays handed to train/add are read in place on a worker thread: do not modify or transfer them until the
 * promise settles (search copies its queries).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { type ErrorCode, ParamineError } from '../errors.js';

export type Metric = 'ip' | 'l2';

/** Per-query ANN parameters (not to be confused with the search stage's request options). */
export interface AnnSearchParams {
  /** IVF lists to visit (clamped to nlist); default: the index's own nprobe (FAISS default 1). */
  nprobe?: number;
  /**
   * HNSW coarse quantizer (`IVF{n}_HNSW{M}`) only: size of the candidate list while finding the nprobe
   * nearest lists (raised to nprobe when smaller); default: the quantizer's own (FAISS default 16).
   */
  efSearch?: number;
  /** Refine stage only: candidates taken from the coarse layer per result (k * kFactor); default 1. */
  kFactor?: number;
  /**
   * Search only these ids (FAISS's IDSelectorBatch; a mining job's group). IVF indexes visit `nprobe`
   * lists as usual and skip the other ids in them, so a small group can come back short: search small
   * groups exactly instead. Fast-scan indexes reject it (BAD_INPUT).
   */
  ids?: BigInt64Array;
}

export interface KmeansOptions {
  /** Lloyd iterations (default 20). */
  niter?: number;
  seed?: number;
  /** Inner-product data: unit-length centroids, points assigned by inner product (default false: L2). */
  spherical?: boolean;
  /** Points beyond k * this are subsampled by FAISS (default 256). */
  maxPointsPerCentroid?: number;
}

export interface SearchResult {
  /** n * k scores, row-major; IP: larger is closer, L2: squared distance, smaller is closer. */
  distances: Float32Array;
  /** n * k ids; -1 where fewer than k vectors were found. */
  ids: BigInt64Array;
}

export interface ThreadCounts {
  /** OpenMP threads per FAISS operation. */
  omp: number;
  /** OpenBLAS threads (matrix products in flat search and k-means). */
  blas: number;
}

interface NativeIndex {
  readonly dim: number;
  readonly metric: Metric;
  readonly ntotal: number;
  readonly isTrained: boolean;
  readonly readOnly: boolean;
  readonly closed: boolean;
  readonly factory: string;
  readonly structure: string;
  readonly nlist: number | null;
  readonly coarseDim: number;
  readonly hnswQuantizer: boolean;
  readonly preTransform: boolean;
  train(x: Float32Array): Promise<void>;
  trainInputStages(x: Float32Array): Promise<void>;
  applyPreTransform(x: Float32Array): Promise<Float32Array>;
  setCentroids(c: Float32Array): Promise<void>;
  trainCodes(x: Float32Array): Promise<void>;
  add(x: Float32Array, ids: BigInt64Array): Promise<void>;
  search(x: Float32Array, k: number, options?: AnnSearchParams): Promise<SearchResult>;
  write(path: string): Promise<void>;
  cloneEmpty(): Promise<NativeIndex>;
  merge(other: NativeIndex): Promise<void>;
  close(): Promise<void>;
}

interface NativeHalfVectors {
  readonly count: number;
  readonly dim: number;
  rescore(queries: Float32Array, candidates: BigInt64Array, k: number, metric: Metric): Promise<SearchResult>;
  close(): Promise<void>;
}

interface NativeBinding {
  createIndex(factory: string, dim: number, metric: Metric): NativeIndex;
  kmeans(x: Float32Array, dim: number, k: number, options: KmeansOptions): Promise<Float32Array>;
  openHalfVectors(path: string, dim: number): Promise<NativeHalfVectors>;
  readIndex(path: string, options: { mmap: boolean }): Promise<NativeIndex>;
  setNumThreads(n: number, blas?: number): void;
  getNumThreads(): ThreadCounts;
  mapFile?(path: string): ArrayBuffer;
  readonly MAX_K: number;
  readonly MAX_BASE_K: number;
  readonly faissVersion: string;
}

/** Codes the addon sets on its errors (see src/native/errors.h). */
const NATIVE_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'BAD_INPUT',
  'INDEX_NOT_TRAINED',
  'INDEX_CLOSED',
  'INDEX_READ_ONLY',
  'DIM_MISMATCH',
  'FILE_NOT_FOUND',
  'BAD_FILE',
  'CONFLICT',
  'FAISS_ERROR',
  'INTERNAL',
]);

function toParamineError(e: unknown): ParamineError {
  if (e instanceof ParamineError) return e;
  if (e instanceof Error) {
    const code = (e as Error & { code?: unknown }).code;
    const known = typeof code === 'string' && NATIVE_CODES.has(code) ? (code as ErrorCode) : 'FAISS_ERROR';
    return new ParamineError(known, e.message, { cause: e });
  }
  return new ParamineError('FAISS_ERROR', String(e));
}

async function wrap<T>(p: () => Promise<T>): Promise<T> {
  try {
    return await p();
  } catch (e) {
    throw toParamineError(e);
  }
}

/** Where the addon is: src/native/build/Release under the package root (same from src/ and dist/). */
export function addonPath(): string {
  const override = process.env.PARAMINE_FAISS_ADDON;
  if (override) return override;
  return fileURLToPath(new URL('../../src/native/build/Release/paramine_faiss.node', import.meta.url));
}

let binding: NativeBinding | undefined;

function load(): NativeBinding {
  if (binding) return binding;
  const path = addonPath();
  if (!existsSync(path)) {
    throw new ParamineError('UNAVAILABLE', `FAISS addon not built (${path}); run: npm run build:native`);
  }
  // Idle OpenMP workers sleep instead of spinning (GOMP's default spin burns the cores that the other
  // pool, the event loop and the encoder need). libgomp reads this when the addon loads it.
  process.env.OMP_WAIT_POLICY ??= 'PASSIVE';
  const loaded: unknown = createRequire(import.meta.url)(path);
  if (
    typeof loaded !== 'object' ||
    loaded === null ||
    typeof (loaded as { createIndex?: unknown }).createIndex !== 'function' ||
    typeof (loaded as { readIndex?: unknown }).readIndex !== 'function'
  ) {
    throw new ParamineError('UNAVAILABLE', `${path} is not the paramine FAISS addon`);
  }
  binding = loaded as NativeBinding;
  return binding;
}

/** Whether the addon is built (tests and the CLI use it to explain what is missing). */
export function addonAvailable(): boolean {
  try {
    load();
    return true;
  } catch {
    return false;
  }
}

/** Largest k one search accepts. */
export function maxK(): number {
  return load().MAX_K;
}

export function faissVersion(): string {
  return load().faissVersion;
}

/**
 * Threads per FAISS operation: OpenMP `n` (default min(2, cores) or PARAMINE_FAISS_THREADS) and OpenBLAS
 * `blas` (default 1 or PARAMINE_BLAS_THREADS; unchanged when omitted).
 */
export function setNumThreads(n: number, blas?: number): void {
  try {
    load().setNumThreads(n, blas);
  } catch (e) {
    throw toParamineError(e);
  }
}

export function getNumThreads(): ThreadCounts {
  return load().getNumThreads();
}

/**
 * The whole file as an ArrayBuffer over a private read-only memory map (mmap.cc), or undefined when the
 * addon is not built or predates mapFile (callers then read the file instead).
 */
export function mapFile(path: string): ArrayBuffer | undefined {
  let b: NativeBinding;
  try {
    b = load();
  } catch {
    return undefined;
  }
  if (b.mapFile === undefined) return undefined;
  try {
    return b.mapFile(path);
  } catch (e) {
    throw toParamineError(e);
  }
}

/** One FAISS index. Create with createIndex() or readIndex(). */
export class FaissIndex {
  readonly #native: NativeIndex;

  private constructor(native: NativeIndex) {
    this.#native = native;
  }

  /** @internal */
  static fromNative(native: NativeIndex): FaissIndex {
    return new FaissIndex(native);
  }

  get dim(): number {
    return this.#native.dim;
  }
  get metric(): Metric {
    return this.#native.metric;
  }
  get ntotal(): number {
    return this.#native.ntotal;
  }
  get isTrained(): boolean {
    return this.#native.isTrained;
  }
  /** Opened with mmap: searchable, but add/train/merge/write/cloneEmpty reject with INDEX_READ_ONLY. */
  get readOnly(): boolean {
    return this.#native.readOnly;
  }
  get closed(): boolean {
    return this.#native.closed;
  }
  /** Factory string given at creation ('' when read from a file). */
  get factory(): string {
    return this.#native.factory;
  }
  /** Shape of the FAISS object tree, e.g. "IDMap(Refine(IVFPQ(nlist=1024,M=48,nbits=8),Flat))". */
  get structure(): string {
    return this.#native.structure;
  }
  get nlist(): number | null {
    return this.#native.nlist;
  }
  /** Dimension of the IVF layer (after an OPQ/PCA pre-transform); dim when there is none. */
  get coarseDim(): number {
    return this.#native.coarseDim;
  }
  /** The coarse quantizer is an HNSW graph over the centroids (`IVF{n}_HNSW{M}`). */
  get hnswQuantizer(): boolean {
    return this.#native.hnswQuantizer;
  }
  /** An OPQ / PCA transform comes before the IVF layer (trainInputStages learns it). */
  get preTransform(): boolean {
    return this.#native.preTransform;
  }

  /** Learns the coarse quantizer / codebooks. A no-op for indexes that need no training (Flat). */
  train(vectors: Float32Array): Promise<void> {
    return wrap(() => this.#native.train(vectors));
  }

  /**
   * Step-wise training of IVF indexes (src/index/train.ts drives it): trainInputStages (what learns on
   * raw vectors: an OPQ/PCA pre-transform, refine codes; a no-op without them) -> the caller's k-means
   * in coarseDim space -> setCentroids -> trainCodes.
   */
  trainInputStages(vectors: Float32Array): Promise<void> {
    return wrap(() => this.#native.trainInputStages(vectors));
  }

  /** Vectors mapped into the IVF layer's space (coarseDim floats each); a copy when there is no transform. */
  applyPreTransform(vectors: Float32Array): Promise<Float32Array> {
    return wrap(() => this.#native.applyPreTransform(vectors));
  }

  /** nlist x coarseDim centroids into the coarse quantizer (an HNSW quantizer builds its graph here). */
  setCentroids(centroids: Float32Array): Promise<void> {
    return wrap(() => this.#native.setCentroids(centroids));
  }

  /** Codebooks (PQ/SQ) on the residuals of `vectors` (coarseDim space); the index is trained afterwards. */
  trainCodes(vectors: Float32Array): Promise<void> {
    return wrap(() => this.#native.trainCodes(vectors));
  }

  /** Adds vectors with caller ids (non-negative; FAISS keeps them). */
  add(vectors: Float32Array, ids: BigInt64Array): Promise<void> {
    return wrap(() => this.#native.add(vectors, ids));
  }

  /** k nearest neighbours of each query row. */
  search(queries: Float32Array, k: number, options: AnnSearchParams = {}): Promise<SearchResult> {
    return wrap(() => this.#native.search(queries, k, options));
  }

  /** Writes the index to `path` (FAISS format). */
  write(path: string): Promise<void> {
    return wrap(() => this.#native.write(path));
  }

  /** A trained copy holding no vectors: train once, then fill one clone per shard. */
  async cloneEmpty(): Promise<FaissIndex> {
    return new FaissIndex(await wrap(() => this.#native.cloneEmpty()));
  }

  /** Moves every vector of `other` (cloned from the same trained index) into this one; `other` ends empty. */
  merge(other: FaissIndex): Promise<void> {
    if (!(other instanceof FaissIndex)) {
      return Promise.reject(new ParamineError('BAD_INPUT', 'merge: argument must be a FaissIndex'));
    }
    return wrap(() => this.#native.merge(other.#native));
  }

  /** Frees the index once accepted operations finish; later calls reject with INDEX_CLOSED. */
  close(): Promise<void> {
    return wrap(() => this.#native.close());
  }
}

/** A new, empty index from a FAISS factory string ("Flat", "IVF1024,PQ48np", "IVF1024,PQ48np,RFlat", ...). */
export function createIndex(factory: string, dim: number, metric: Metric): FaissIndex {
  try {
    return FaissIndex.fromNative(load().createIndex(factory, dim, metric));
  } catch (e) {
    throw toParamineError(e);
  }
}

/** Reads an index written by write(). mmap: inverted lists stay in the file (read-only, low memory). */
export async function readIndex(path: string, options: { mmap?: boolean } = {}): Promise<FaissIndex> {
  const native = await wrap(() => load().readIndex(path, { mmap: options.mmap === true }));
  return FaissIndex.fromNative(native);
}

/** k-means over `points` (n x dim, row-major) off the event loop; resolves to k x dim centroids. */
export function kmeans(
  points: Float32Array,
  dim: number,
  k: number,
  options: KmeansOptions = {},
): Promise<Float32Array> {
  return wrap(() => load().kmeans(points, dim, k, options));
}

/**
 * A file of count x dim half floats (an index's vectors.f16), memory-mapped: re-scoring ANN candidates
 * with exact vectors costs page cache, not process memory.
 */
export class HalfVectors {
  readonly #native: NativeHalfVectors;

  private constructor(native: NativeHalfVectors) {
    this.#native = native;
  }

  static async open(path: string, dim: number): Promise<HalfVectors> {
    return new HalfVectors(await wrap(() => load().openHalfVectors(path, dim)));
  }

  get count(): number {
    return this.#native.count;
  }
  get dim(): number {
    return this.#native.dim;
  }

  /**
   * For each query row, scores its row of `candidates` (same count per query, -1 = empty) exactly and
   * keeps the best k, best first (ties: smaller id).
   */
  rescore(
    queries: Float32Array,
    candidates: BigInt64Array,
    k: number,
    metric: Metric,
  ): Promise<SearchResult> {
    return wrap(() => this.#native.rescore(queries, candidates, k, metric));
  }

  close(): Promise<void> {
    return wrap(() => this.#native.close());
  }
}

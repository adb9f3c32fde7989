/**
 * Typed face of the FAISS addon (src/native/*.cc). Every method that touches FAISS runs off the event loop
 * and returns a Promise; every failure is a ParamineError with a stable code.
 *
 * Concurrency: searches and writes on one index run in parallel; train, add and merge take the index
 * exclusively; close() waits for accepted operations and rejects later ones with INDEX_CLOSED.
 * Arrays handed to train/add are read in place on a worker thread: do not modify or transfer them until the
 * promise settles (search copies its queries).
 */

import { ParamineError } from '../errors.js';
import { load, type NativeBinding, type NativeIndex, toParamineError, wrap } from './addon.js';
import type {
  AnnSearchParams,
  KernelCheck,
  KmeansOptions,
  Metric,
  SearchResult,
  ThreadCounts,
} from './types.js';

export { addonPath } from './addon.js';
export { GramScorer } from './gram-scorer.js';
export { HalfVectors } from './half-vectors.js';
export type * from './types.js';

/** The addon, or undefined when it is not built (callers with a fallback). */
function loaded(): NativeBinding | undefined {
  try {
    return load();
  } catch {
    return undefined;
  }
}

/** Whether the addon is built (tests and the CLI use it to explain what is missing). */
export function addonAvailable(): boolean {
  return loaded() !== undefined;
}

/** Largest k one search accepts. */
export function maxK(): number {
  return load().MAX_K;
}

export function faissVersion(): string {
  return load().faissVersion;
}

/** The float distance kernels FAISS runs on (src/native/distance_kernels.cc): "avx2-fma-f16c", "avx2-fma" or "portable". */
export function distanceKernels(): string {
  return load().distanceKernels;
}

/**
 * Compares the kernels with FAISS's own scalar ones: `linked` (the library's callers reach ours), the largest
 * relative difference, and how many nearest-centroid answers differ. For tests.
 */
export function checkDistanceKernels(): KernelCheck {
  return load().checkDistanceKernels();
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
 * The file (or `length` bytes of it from `offset`, a multiple of the page size) as an ArrayBuffer over a
 * private read-only memory map (mmap.cc), or undefined when the addon is not built or predates mapFile
 * (callers then read the file instead). Large files are mapped in windows: one ArrayBuffer has a size limit.
 */
export function mapFile(path: string, offset = 0, length?: number): ArrayBuffer | undefined {
  const b = loaded();
  if (b?.mapFile === undefined) return undefined;
  try {
    return b.mapFile(path, offset, length);
  } catch (e) {
    throw toParamineError(e);
  }
}

/**
 * This process's shared or read-only mappings of the file at `path` (LMDB's map of a store) let go of their
 * pages (mmap.cc): what was read through them stops counting in the resident set, and is read again from the
 * page cache when needed. Returns the bytes of the mappings advised; 0 where the addon or the system cannot.
 */
export function dropMappedPages(path: string): number {
  try {
    return loaded()?.dropMappedPages?.(path) ?? 0;
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
  /**
   * Whether removeIds can drop vectors from this structure (not fast-scan, HNSW or refine layers); a
   * memory-mapped index answers for its file, so a cheap map checks a shard before any work.
   */
  get removable(): boolean {
    return this.#native.removable;
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

  /**
   * Drops the vectors with these ids (those it does not hold are ignored); resolves to how many it dropped.
   * FAISS scans every inverted list once. Fast-scan and HNSW indexes cannot drop vectors (FAISS_ERROR).
   */
  removeIds(ids: BigInt64Array): Promise<number> {
    return wrap(() => this.#native.removeIds(ids));
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

/** Public types of the FAISS binding (re-exported by index.ts). */
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
  /**
   * Skip these ids inside the search (deleted sentences): bit i of the bitmap set excludes id i; ids past
   * its end are kept. Borrowed, not copied, for the search's duration. Fast-scan indexes reject it.
   */
  exclude?: Uint8Array;
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

/** checkDistanceKernels(): the addon's SIMD kernels against FAISS's scalar reference loops. */
export interface KernelCheck {
  linked: boolean;
  maxRelError: number;
  nearestMismatches: number;
}

export interface ThreadCounts {
  /** OpenMP threads per FAISS operation. */
  omp: number;
  /** OpenBLAS threads (matrix products in flat search and k-means). */
  blas: number;
}

/**
 * Documents' compressed TF-IDF rows as GramScorer reads them in place (src/jobs/align-gram-rows.ts's format):
 * row r is bytes start[r]..end[r] of chunks[chunkOf[r]].
 */
export interface GramRowsView {
  countBits: number;
  chunks: readonly Uint8Array[];
  chunkOf: Uint16Array;
  start: Uint32Array;
  end: Uint32Array;
}

/** Int8 rows with a scale each (src/jobs/align-hybrid.ts's Int8Rows): row r is codes[r * dim ..] x scales[r]. */
export interface Int8RowsView {
  codes: Int8Array;
  scales: Float32Array;
  dim: number;
}

/**
 * The cost model of an index: what it holds in RAM, on disk and memory-mapped, per vector and fixed, and
 * what training it needs. `auto` (factory.ts) chooses with it, the manifest records it, and a RAM budget
 * (`--max-ram`) can be checked against it before any work.
 *
 * Figures follow FAISS 1.7.3's data structures: inverted lists hold a code and an 8-byte id per vector;
 * an IDMap or IndexRefine wrapper adds its own 8-byte id per vector; an HNSW quantizer holds its
 * centroids plus 2*M level-0 neighbour ids (4 bytes) per centroid; an L2 IVF-PQ adds a precomputed
 * table of nlist x M x 256 floats when it is under 2 GiB (FAISS's default cap).
 */

/** Refine stage: none, finer codes in RAM (FAISS IndexRefine), or exact vectors re-read from vectors.f16. */
export type RefineKind = 'none' | 'sq8' | 'flat' | 'vectors';

/** The parts of an index that drive its cost (and its factory string). */
export interface IndexShape {
  kind: 'flat' | 'ivf-pq' | 'other';
  dim: number;
  metric: 'ip' | 'l2';
  /** OPQ sub-quantizers (0: no OPQ rotation); the rotation keeps dim. */
  opq: number;
  nlist: number;
  quantizer: 'flat' | 'hnsw';
  /** HNSW neighbours per node (M) of the coarse quantizer. */
  hnswM: number;
  pqM: number;
  pqBits: number;
  refine: RefineKind;
}

export interface Bytes {
  /** Held by the serving process (heap, or page cache when memory-mapped). */
  ram: number;
  /** Files in the index directory. */
  disk: number;
  /** Read through a memory map: costs page cache when touched, not process heap. */
  mapped: number;
}

export interface IndexCost {
  perVector: Bytes;
  fixed: Bytes;
  /** For `n` vectors. */
  total: Bytes & { n: number };
  /** Bytes a vector costs in RAM per part, for the manifest's explanation. */
  parts: Record<string, number>;
}

const ID_BYTES = 8;
/** FAISS's precomputed_table_max_bytes default. */
const MAX_PRECOMPUTED_TABLE = 2 ** 31;

export function codeBytes(shape: Pick<IndexShape, 'pqM' | 'pqBits'>): number {
  return Math.ceil((shape.pqM * shape.pqBits) / 8);
}

/** Bytes of the coarse quantizer, codebooks and rotation (independent of n). */
function fixedRam(s: IndexShape): number {
  if (s.kind !== 'ivf-pq') return 0;
  const centroids = s.nlist * s.dim * 4;
  // HNSW: 2M level-0 links + ~1/M of a node on upper levels, offsets and level numbers.
  const graph = s.quantizer === 'hnsw' ? s.nlist * (2 * s.hnswM * 4 + 4 * 2 + 8 + 4) : 0;
  const codebook = 2 ** s.pqBits * s.dim * 4;
  const rotation = s.opq > 0 ? s.dim * s.dim * 4 : 0;
  const tableBytes = s.nlist * s.pqM * 2 ** s.pqBits * 4;
  const table = s.metric === 'l2' && s.pqBits === 8 && tableBytes < MAX_PRECOMPUTED_TABLE ? tableBytes : 0;
  // Two std::vectors (codes, ids) per inverted list.
  const lists = s.nlist * 48;
  return centroids + graph + codebook + rotation + table + lists;
}

/** Per-vector bytes by part: codes, ids, refine codes, kept vectors. */
function perVectorParts(s: IndexShape): Record<string, number> {
  if (s.kind === 'flat') return { vectors: 4 * s.dim, id: ID_BYTES };
  const parts: Record<string, number> = { code: codeBytes(s), id: ID_BYTES };
  if (s.refine === 'sq8' || s.refine === 'flat') {
    parts.refine = s.refine === 'sq8' ? s.dim : 4 * s.dim;
    // IndexRefine numbers its vectors; the binding wraps it in an IDMap for caller ids.
    parts.idMap = ID_BYTES;
  }
  return parts;
}

/**
 * Cost of an index of `n` vectors of this shape. `keptVectors`: vectors.f16 (2 x dim bytes a vector) is in
 * the directory (memory-mapped when it serves a 'vectors' refine). `mmap`: inverted lists served from a
 * memory map (ShardedIndex open with mmap) instead of the heap.
 */
export function indexCost(
  shape: IndexShape,
  n: number,
  options: { keptVectors?: boolean; mmap?: boolean } = {},
): IndexCost {
  const parts = perVectorParts(shape);
  const inIndex = Object.values(parts).reduce((a, b) => a + b, 0);
  const half = options.keptVectors || shape.refine === 'vectors' ? 2 * shape.dim : 0;
  const mmapLists = options.mmap === true && shape.kind === 'ivf-pq';
  const perVector: Bytes = {
    ram: mmapLists ? 0 : inIndex,
    disk: inIndex + half,
    mapped: (mmapLists ? inIndex : 0) + (shape.refine === 'vectors' ? half : 0),
  };
  const fixedBytes = fixedRam(shape);
  const fixed: Bytes = { ram: fixedBytes, disk: fixedBytes, mapped: 0 };
  return {
    perVector,
    fixed,
    total: {
      n,
      ram: fixed.ram + n * perVector.ram,
      disk: fixed.disk + n * perVector.disk,
      mapped: n * perVector.mapped,
    },
    parts,
  };
}

/**
 * Memory the two-level training holds at its peak: the sample's ids and group numbers, the centroids,
 * the HNSW graph being built, and the largest group's vectors (about 3x an average group: k-means groups
 * are uneven).
 */
export function trainingRam(shape: IndexShape, sampleSize: number): number {
  if (shape.kind !== 'ivf-pq') return 0;
  const groups = Math.max(1, Math.round(Math.sqrt(shape.nlist)));
  const group = Math.min(sampleSize, (3 * sampleSize) / groups) * shape.dim * 4;
  return sampleSize * 12 + fixedRam(shape) + group;
}

/** "1.2 GB" style (powers of 1000, as disks and RAM budgets are quoted). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let v = bytes;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v >= 100 || u === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[u]}`;
}

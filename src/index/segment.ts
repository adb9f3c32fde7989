/**
 * Sealed segments (issue #30): sentences added to a serving index start in the growing exact segment and
 * are sealed, in the background, into a segment of the build's own kind (an empty clone of the trained
 * shards: IVF-PQ with the build's centroids and codebooks, so nothing is retrained) plus their exact
 * vectors as half floats for re-scoring. A segment holds one contiguous range of added ids, so its
 * vectors' row r is id `first + r`. Files are written under temporary names, fsynced and renamed before
 * the segment is recorded as sealed: a crash leaves either the sealed segment or the growing one.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceFile } from '../durable.js';
import { ParamineError } from '../errors.js';
import { type FaissIndex, HalfVectors, type Metric, readIndex, type SearchResult } from '../native/index.js';
import { type FileDigest, fileDigest, verifyChecksums } from './checksums.js';
import { toHalf } from './half.js';
import type { Manifest } from './manifest.js';

/** A sealed segment as the updates record it. */
export interface SegmentInfo {
  /** Its ids are first .. first + count - 1. */
  first: number;
  count: number;
  index: { file: string } & FileDigest;
  vectors: { file: string } & FileDigest;
  /** How well the build's codebooks fit these vectors, against the build's own (drift, see quantizationFit). */
  fit?: SegmentFit | undefined;
  sealedAt: string;
}

/**
 * How well the build's trained centroids and codebooks fit some vectors (quantizationFit): measured on a
 * sealed segment's vectors and on a sample of the build's own, so drift shows as the difference.
 */
export interface SegmentFit {
  /** Vectors measured. */
  n: number;
  /** Mean |exact self-score - the quantized index's score of the vector against itself|. */
  error: number;
  /** Share of the vectors that the quantized index returns as their own nearest neighbour. */
  selfRecall: number;
}

/**
 * The fit of `template`'s trained quantizers to `vectors` (row-major): an empty clone holds them, each is
 * searched for itself with `params` (the index's default operating point). Exact indexes fit perfectly.
 */
export async function quantizationFit(
  template: FaissIndex,
  vectors: Float32Array,
  params: Parameters<FaissIndex['search']>[2],
): Promise<SegmentFit> {
  const dim = template.dim;
  const n = vectors.length / dim;
  const probe = await template.cloneEmpty();
  try {
    await probe.add(
      vectors,
      BigInt64Array.from({ length: n }, (_, i) => BigInt(i)),
    );
    const found = await probe.search(vectors, 1, params);
    let error = 0;
    let self = 0;
    for (let i = 0; i < n; i++) {
      const v = vectors.subarray(i * dim, (i + 1) * dim);
      let exact = 0;
      if (template.metric === 'ip') for (const x of v) exact += x * x;
      error += Math.abs(exact - (found.distances[i] as number));
      if (found.ids[i] === BigInt(i)) self++;
    }
    return { n, error: n === 0 ? 0 : error / n, selfRecall: n === 0 ? 1 : self / n };
  } finally {
    await probe.close();
  }
}

/** Fits of several vector sets as one: their means weighted by size (undefined when they hold none). */
export function joinFits(fits: readonly SegmentFit[]): SegmentFit | undefined {
  const n = fits.reduce((a, f) => a + f.n, 0);
  if (n === 0) return undefined;
  return {
    n,
    error: fits.reduce((a, f) => a + f.error * f.n, 0) / n,
    selfRecall: fits.reduce((a, f) => a + f.selfRecall * f.n, 0) / n,
  };
}

/** The drift a compaction recorded in the manifest (folded sentences the quantizers were not trained on). */
export function compactedFit(manifest: Manifest): SegmentFit | undefined {
  const rebuild = manifest.build.rebuild as { retrained?: boolean; fit?: SegmentFit } | undefined;
  return rebuild?.retrained === false ? rebuild.fit : undefined;
}

/** A sealed segment opened for search. */
export interface OpenSegment {
  info: SegmentInfo;
  index: FaissIndex;
  vectors: HalfVectors;
}

const name = (first: number, count: number, ext: string) =>
  `seg-${String(first).padStart(12, '0')}-${count}.${ext}`;

/**
 * Seals `count` vectors (row-major, ids first .. first + count - 1) into `dir`: an empty clone of
 * `template` filled with them, and their half-float copy. Returns the record to store once both files
 * are durable; `template` is left as it was.
 */
export async function sealSegment(
  dir: string,
  template: FaissIndex,
  first: number,
  vectors: Float32Array,
): Promise<SegmentInfo> {
  const dim = template.dim;
  const count = vectors.length / dim;
  if (!Number.isInteger(count) || count < 1) {
    throw new ParamineError('BAD_INPUT', `sealSegment: ${vectors.length} floats is not rows of ${dim}`);
  }
  const segment = await template.cloneEmpty();
  try {
    await segment.add(
      vectors,
      BigInt64Array.from({ length: count }, (_, i) => BigInt(first + i)),
    );
    const indexFile = name(first, count, 'faiss');
    const vectorsFile = name(first, count, 'f16');
    await replaceFile(join(dir, indexFile), (tmp) => segment.write(tmp));
    const halves = toHalf(vectors);
    await replaceFile(join(dir, vectorsFile), (tmp) =>
      writeFile(tmp, new Uint8Array(halves.buffer, halves.byteOffset, halves.byteLength)),
    );
    return {
      first,
      count,
      index: { file: indexFile, ...(await fileDigest(join(dir, indexFile))) },
      vectors: { file: vectorsFile, ...(await fileDigest(join(dir, vectorsFile))) },
      sealedAt: new Date().toISOString(),
    };
  } finally {
    await segment.close();
  }
}

/** Opens a sealed segment after checking its files against the record (BAD_FILE when they differ). */
export async function openSegment(dir: string, info: SegmentInfo, dim: number): Promise<OpenSegment> {
  await verifyChecksums(dir, { shards: [info.index], vectors: info.vectors }, 'auto');
  const index = await readIndex(join(dir, info.index.file));
  let vectors: HalfVectors | undefined;
  try {
    if (index.ntotal !== info.count || index.dim !== dim) {
      throw new ParamineError(
        'BAD_FILE',
        `${dir}/${info.index.file}: ${index.ntotal} ${index.dim}-d vectors, the updates say ${info.count} ${dim}-d`,
      );
    }
    vectors = await HalfVectors.open(join(dir, info.vectors.file), dim);
    if (vectors.count !== info.count) {
      throw new ParamineError(
        'BAD_FILE',
        `${dir}/${info.vectors.file}: ${vectors.count} vectors, the updates say ${info.count}`,
      );
    }
    return { info, index, vectors };
  } catch (e) {
    await Promise.all([index.close(), vectors?.close()]);
    throw e;
  }
}

/**
 * Searches a sealed segment: `fetch` approximate candidates per query, then the exact top k of them from
 * the segment's own vectors (so its scores compare with the shards' re-scored ones and the growing
 * segment's exact ones).
 */
export async function searchSegment(
  s: OpenSegment,
  queries: Float32Array,
  k: number,
  fetch: number,
  params: Parameters<FaissIndex['search']>[2],
  metric: Metric,
): Promise<SearchResult> {
  const found = await s.index.search(queries, fetch, params);
  const first = BigInt(s.info.first);
  const rows = found.ids.map((id) => (id < 0n ? -1n : id - first));
  const exact = await s.vectors.rescore(queries, rows, k, metric);
  return { distances: exact.distances, ids: exact.ids.map((r) => (r < 0n ? -1n : r + first)) };
}

export async function closeSegment(s: OpenSegment): Promise<void> {
  await Promise.all([s.index.close(), s.vectors.close()]);
}

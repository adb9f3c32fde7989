/**
 * The hybrid score: the mean of a pair's exact character n-gram TF-IDF cosine and the cosine of its documents'
 * mean sentence embeddings. The two go wrong on different pairs: TF-IDF scores a chance document that shares
 * a few word runs as high as a paraphrase written in other words, the embeddings score two documents on one
 * topic high whatever their words. On 10^5 generated documents the mean of both separated the planted pairs
 * from chance ones far better than either (docs/benchmarks/documents.md). The embeddings are kept as int8
 * (one scale a row: 384 bytes a document, not 1,536), well inside what moves a pair across the band. Both
 * methods that read the mean embeddings (mean, hybrid) read them here. Hybrid searches by the score too
 * (jointVectors): at 10^6 documents re-scoring TF-IDF's candidates left 0.086 of the planted pairs unseen, the
 * joint search 0.043.
 */
import { createHash } from 'node:crypto';
import { ParamineError } from '../errors.js';
import type { DocVectors } from './align-search.js';
import type { DocumentSet, MeanChunk } from './align-vectors.js';

/** Int8Rows as another thread reads them: shared memory. */
export interface SharedInt8Rows {
  codes: Int8Array;
  scales: Float32Array;
  dim: number;
}

/** Rows of `m` (count x dim, each normalized) as int8 with a scale each: row r's dot product with row s. */
export class Int8Rows {
  private constructor(
    private readonly codes: Int8Array,
    private readonly scales: Float32Array,
    readonly dim: number,
  ) {}

  /** count x dim rows, all zero until set; in shared memory, so a worker thread reads them in place (share()). */
  static empty(count: number, dim: number): Int8Rows {
    const codes = new Int8Array(new SharedArrayBuffer(count * dim));
    return new Int8Rows(codes, new Float32Array(new SharedArrayBuffer(4 * count)), dim);
  }

  /** The rows for another thread (read()). */
  share(): SharedInt8Rows {
    return { codes: this.codes, scales: this.scales, dim: this.dim };
  }

  /** Rows another thread shared (share()). */
  static read(s: SharedInt8Rows): Int8Rows {
    return new Int8Rows(s.codes, s.scales, s.dim);
  }

  static from(m: Float32Array, dim: number): Int8Rows {
    const rows = Int8Rows.empty(m.length / dim, dim);
    rows.set(0, m);
    return rows;
  }

  /** Rows first.. from `m` (floats, each normalized), quantized with a scale each. */
  set(first: number, m: Float32Array): void {
    const { codes, scales, dim } = this;
    for (let k = 0; k < m.length / dim; k++) {
      let top = 0;
      for (let x = k * dim; x < (k + 1) * dim; x++) top = Math.max(top, Math.abs(m[x] as number));
      const scale = top > 0 ? top / 127 : 0;
      scales[first + k] = scale;
      for (let x = k * dim; x < (k + 1) * dim; x++)
        codes[first * dim + x] = scale > 0 ? Math.round((m[x] as number) / scale) : 0;
    }
  }

  /** Row r as floats times `scale`, written into `out` from `at`. */
  decodeInto(r: number, out: Float32Array, at: number, scale: number): void {
    const s = (this.scales[r] as number) * scale;
    for (let x = 0; x < this.dim; x++) out[at + x] = (this.codes[r * this.dim + x] as number) * s;
  }

  dot(r: number, s: number): number {
    const { codes, dim } = this;
    let sum = 0;
    for (let x = 0; x < dim; x++) sum += (codes[r * dim + x] as number) * (codes[s * dim + x] as number);
    return sum * (this.scales[r] as number) * (this.scales[s] as number);
  }
}

/** `tfidf` (exact cosines into `out`, -2 where js is -1) made hybrid: each the mean with the embeddings' cosine. */
export function hybridScore(
  tfidf: (i: number, js: Int32Array, out: Float32Array) => void,
  means: Int8Rows,
): (i: number, js: Int32Array, out: Float32Array) => void {
  return (i, js, out) => {
    tfidf(i, js, out);
    for (let x = 0; x < js.length; x++) {
      const j = js[x] as number;
      if (j >= 0) out[x] = ((out[x] as number) + means.dot(i, j)) / 2;
    }
  };
}

/** The TF-IDF projection's least dimensions beside the embeddings in a joint search vector. */
const MIN_PROJECTION = 64;

/**
 * Search vectors whose inner product estimates the hybrid score itself: the TF-IDF projection and the mean
 * embedding side by side, each scaled by 1/sqrt(2), so the search ranks candidates by both, not by TF-IDF
 * alone. The projection takes what `dim` leaves beside the embeddings (at least MIN_PROJECTION): with the
 * default 512 and 384-d embeddings, 128 dimensions whose noise, halved, is the 512-d projection's on TF-IDF.
 */
export function jointVectors(
  project: (ids: ArrayLike<number>, dim: number) => Float32Array,
  dim: number,
  means: Int8Rows,
): DocVectors {
  const pdim = Math.max(MIN_PROJECTION, dim - means.dim);
  const width = pdim + means.dim;
  return {
    dim: width,
    rows: (ids) => {
      const p = project(ids, pdim);
      const out = new Float32Array(ids.length * width);
      for (let r = 0; r < ids.length; r++) {
        for (let x = 0; x < pdim; x++) out[r * width + x] = (p[r * pdim + x] as number) * Math.SQRT1_2;
        means.decodeInto(ids[r] as number, out, r * width + pdim, Math.SQRT1_2);
      }
      return out;
    },
  };
}

/** What holds the documents' mean embeddings (a DocumentSet): absent when the index kept none. */
interface Means {
  count: number;
  means?: DocumentSet['means'];
}

/** How far the reading of the embeddings is, as the alignment's `means` stage. */
type Progress = (stage: 'means', done: number, total: number) => void;

/**
 * Each chunk of the documents' mean embeddings handed to `take` (its first document, its rows) as it is read,
 * or what to do when the index kept none. Returns their digest, the sha256 of all the floats in order (they
 * are part of an alignment's work: its checkpoint).
 */
async function eachMeanChunk(
  set: Means,
  method: string,
  progress: Progress | undefined,
  take: (first: number, chunk: MeanChunk) => void,
): Promise<string> {
  if (set.means === undefined) {
    throw new ParamineError(
      'BAD_INPUT',
      `method ${method} needs the kept embeddings (vectors.f16; build with --vectors f16), or use --method tfidf`,
      { field: 'method' },
    );
  }
  const hash = createHash('sha256');
  let first = 0;
  for await (const chunk of set.means(progress && ((done, total) => progress('means', done, total)))) {
    take(first, chunk);
    first += chunk.rows.length / chunk.dim;
    hash.update(new Uint8Array(chunk.rows.buffer, chunk.rows.byteOffset, chunk.rows.byteLength));
  }
  return hash.digest('hex');
}

/** The documents' mean embeddings as floats (the mean method's index input: count x dim), and their digest. */
export async function readMeans(
  set: Means,
  method: string,
  progress?: Progress,
): Promise<{ m: Float32Array; digest: string }> {
  let m = new Float32Array(0);
  const digest = await eachMeanChunk(set, method, progress, (first, { dim, rows }) => {
    if (first === 0) m = new Float32Array(set.count * dim);
    m.set(rows, first * dim);
  });
  return { m, digest };
}

/**
 * The documents' mean embeddings as int8 rows, and their digest: each chunk quantized as it comes, so the
 * floats of all documents are never held.
 */
export async function meanRows(
  set: Means,
  method: string,
  progress?: Progress,
): Promise<{ rows: Int8Rows; digest: string }> {
  let rows = Int8Rows.empty(0, 1);
  const digest = await eachMeanChunk(set, method, progress, (first, chunk) => {
    if (first === 0) rows = Int8Rows.empty(set.count, chunk.dim);
    rows.set(first, chunk.rows);
  });
  return { rows, digest };
}

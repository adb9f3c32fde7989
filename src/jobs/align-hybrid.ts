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
import { sha256 } from '../durable.js';
import { ParamineError } from '../errors.js';
import type { DocVectors } from './align-search.js';

/** Rows of `m` (count x dim, each normalized) as int8 with a scale each: row r's dot product with row s. */
export class Int8Rows {
  private constructor(
    private readonly codes: Int8Array,
    private readonly scales: Float32Array,
    readonly dim: number,
  ) {}

  static from(m: Float32Array, dim: number): Int8Rows {
    const count = m.length / dim;
    const codes = new Int8Array(m.length);
    const scales = new Float32Array(count);
    for (let r = 0; r < count; r++) {
      let top = 0;
      for (let x = r * dim; x < (r + 1) * dim; x++) top = Math.max(top, Math.abs(m[x] as number));
      const scale = top > 0 ? top / 127 : 0;
      scales[r] = scale;
      for (let x = r * dim; x < (r + 1) * dim; x++)
        codes[x] = scale > 0 ? Math.round((m[x] as number) / scale) : 0;
    }
    return new Int8Rows(codes, scales, dim);
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

/** The digest of the documents' mean embeddings (they are part of an alignment's work: its checkpoint). */
export const meansDigest = (m: Float32Array): string =>
  sha256(new Uint8Array(m.buffer, m.byteOffset, m.byteLength));

/** What holds the documents' mean embeddings (a DocumentSet): absent when the index kept none. */
interface Means {
  means?: ((progress?: (done: number, total: number) => void) => Promise<Float32Array>) | undefined;
}

/** How far the reading of the embeddings is, as the alignment's `means` stage. */
type Progress = (stage: 'means', done: number, total: number) => void;

/** The documents' mean embeddings (methods mean and hybrid), or what to do when the index kept none. */
export function readMeans(set: Means, method: string, progress?: Progress): Promise<Float32Array> {
  if (set.means === undefined) {
    throw new ParamineError(
      'BAD_INPUT',
      `method ${method} needs the kept embeddings (vectors.f16; build with --vectors f16), or use --method tfidf`,
      { field: 'method' },
    );
  }
  return set.means(progress && ((done, total) => progress('means', done, total)));
}

/** The documents' mean embeddings as int8 rows, and their digest; the floats are not kept. */
export async function meanRows(
  set: Means & { count: number },
  method: string,
  progress?: Progress,
): Promise<{ rows: Int8Rows; digest: string }> {
  const m = await readMeans(set, method, progress);
  return { rows: Int8Rows.from(m, m.length / set.count), digest: meansDigest(m) };
}

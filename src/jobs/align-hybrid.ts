/**
 * The hybrid score: the mean of a pair's exact character n-gram TF-IDF cosine and the cosine of its documents'
 * mean sentence embeddings. The two go wrong on different pairs: TF-IDF scores a chance document that shares
 * a few word runs as high as a paraphrase written in other words, the embeddings score two documents on one
 * topic high whatever their words. On 10^5 generated documents the mean of both separated the planted pairs
 * from chance ones far better than either (docs/benchmarks/documents.md). The embeddings are kept as int8
 * (one scale a row: 384 bytes a document, not 1,536), well inside what moves a pair across the band.
 */
import { sha256 } from '../durable.js';

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

/** The documents' mean embeddings as int8 rows, and their digest (the embeddings are part of the work). */
export async function meanRows(
  means: (() => Promise<Float32Array>) | undefined,
  count: number,
): Promise<{ rows: Int8Rows; digest: string }> {
  const m = await (means as () => Promise<Float32Array>)();
  return {
    rows: Int8Rows.from(m, m.length / count),
    digest: sha256(new Uint8Array(m.buffer, m.byteOffset, m.byteLength)),
  };
}

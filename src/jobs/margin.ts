/**
 * Ratio margin (Artetxe & Schwenk 2019, "Margin-based parallel corpus mining"): a pair's cosine divided
 * by the mean of both sentences' neighbourhood similarity, which discounts "hub" sentences that are close
 * to everything. A sentence's neighbourhood similarity is the mean cosine to its k nearest neighbours
 * (itself excluded).
 *
 * FAISS scores a batch of 20+ queries with BLAS and a smaller one with a per-query loop, which round
 * differently; so index sentences are always scored in the same fixed blocks of ids, and a mean does not
 * depend on which job batch asked for it first (a resumed job computes exactly the same margins).
 */
import { type AnnIndex, type AnnOptions, cosineOf } from '../search/core.js';

/** Ids per canonical block. */
const BLOCK = 64;

export class NeighbourhoodMeans {
  /** Mean per index id; NaN until its block was computed. */
  private readonly means: Float32Array;

  constructor(
    private readonly index: AnnIndex,
    private readonly k: number,
    private readonly params: AnnOptions,
    ntotal: number,
  ) {
    this.means = new Float32Array(ntotal).fill(Number.NaN);
  }

  /** Means for rows of `vectors`; `selfIds[i]` (when not null) is left out of row i's neighbours. */
  async ofVectors(vectors: Float32Array, selfIds: ReadonlyArray<number | null>): Promise<number[]> {
    const n = selfIds.length;
    if (n === 0) return [];
    const fetch = this.k + 1;
    const { distances, ids } = await this.index.search(vectors, fetch, this.params);
    const out: number[] = [];
    for (let q = 0; q < n; q++) {
      let sum = 0;
      let used = 0;
      for (let j = 0; j < fetch && used < this.k; j++) {
        const id = Number(ids[q * fetch + j]);
        if (id < 0 || id === selfIds[q]) continue;
        sum += cosineOf(this.index.metric, distances[q * fetch + j] as number);
        used++;
      }
      out.push(used === 0 ? 0 : sum / used);
    }
    return out;
  }

  /** Means for index ids; `load` gives the vectors of ids (whole blocks are computed at a time). */
  async ofIds(
    ids: readonly number[],
    load: (ids: number[]) => Promise<Float32Array>,
  ): Promise<Map<number, number>> {
    const blocks = [
      ...new Set(ids.filter((id) => Number.isNaN(this.means[id])).map((id) => Math.floor(id / BLOCK))),
    ];
    for (const b of blocks.sort((x, y) => x - y)) {
      const start = b * BLOCK;
      const block = Array.from({ length: Math.min(BLOCK, this.means.length - start) }, (_, i) => start + i);
      const means = await this.ofVectors(await load(block), block);
      means.forEach((m, i) => {
        this.means[start + i] = m;
      });
    }
    return new Map(ids.map((id) => [id, this.means[id] as number]));
  }
}

export function ratioMargin(cosine: number, meanX: number, meanY: number): number {
  const denom = (meanX + meanY) / 2;
  return denom > 0 ? cosine / denom : Number.POSITIVE_INFINITY;
}

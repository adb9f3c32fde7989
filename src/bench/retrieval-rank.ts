/**
 * Ranks for the retrieval benchmark: where each query's target lands among its neighbours, through an
 * index directly (ANN or exact; s1 itself excluded, ties pessimistic) or through the shared search core
 * after the cross-encoder reranked the first K candidates.
 */
import type { SearchCore } from '../search/core.js';
import { searchOptionsSchema } from '../search/types.js';
import { normalize } from '../text/index.js';
import type { LabelScheme } from '../text/labels.js';
import { type RankedQuery, rankOf, rankOfAny } from './metrics.js';
import type { PairQuery } from './retrieval-index.js';

/** What ranking needs besides the index: the queries, their vectors, and where they are reported. */
export interface RankInput {
  queries: readonly PairQuery[];
  /** The queries' s1 vectors, one row each. */
  vectors: Float32Array;
  dim: number;
  scheme: LabelScheme;
}

interface Searchable {
  search(
    queries: Float32Array,
    k: number,
    options?: { nprobe?: number },
  ): Promise<{ ids: BigInt64Array; distances: Float32Array }>;
}

/** Queries searched per call. */
const SEARCH_BATCH = 256;
/** Queries per search-core call: one cross-encoder call scores a whole group's (query, candidate) pairs. */
const RERANK_GROUP = 32;

/**
 * The rank of every query's target among the `deepest + 1` nearest neighbours (one more, since s1 itself
 * is among them), undefined when below the deepest depth; `known` the same for its first known paraphrase.
 */
export async function rankThrough(
  index: Searchable,
  input: RankInput,
  o: { deepest: number; corpusSize: number; nprobe?: number | undefined },
): Promise<RankedQuery[]> {
  const { queries, vectors, dim, scheme } = input;
  const k = Math.min(o.deepest + 1, o.corpusSize);
  const opts = o.nprobe === undefined ? {} : { nprobe: o.nprobe };
  const within = (r: number | undefined) => (r !== undefined && r <= o.deepest ? r : undefined);
  const ranked: RankedQuery[] = [];
  for (let s = 0; s < queries.length; s += SEARCH_BATCH) {
    const part = vectors.subarray(s * dim, Math.min(queries.length, s + SEARCH_BATCH) * dim);
    const { ids, distances } = await index.search(part, k, opts);
    for (let j = 0; j < part.length / dim; j++) {
      const x = queries[s + j] as PairQuery;
      const row = [...ids.subarray(j * k, (j + 1) * k)].map(Number);
      const scores = [...distances.subarray(j * k, (j + 1) * k)];
      ranked.push({
        rank: within(rankOf(x.t, row, x.q, scores)),
        known: within(rankOfAny(x.known, row, x.q, scores)),
        group: scheme.retrievalGroup(x.pair.label),
      });
    }
  }
  return ranked;
}

/** The rank of every query's target after the search core reranked its first `depth` candidates. */
export async function rankAfterRerank(
  core: SearchCore,
  input: RankInput,
  o: { depth: number; nprobe?: number | undefined },
): Promise<RankedQuery[]> {
  const { queries, vectors, dim, scheme } = input;
  const opts = searchOptionsSchema.parse({
    k: o.depth,
    candidates: o.depth,
    excludeDuplicates: false,
    ...(o.nprobe === undefined ? {} : { nprobe: o.nprobe }),
  });
  const ranked: RankedQuery[] = [];
  for (let s = 0; s < queries.length; s += RERANK_GROUP) {
    const group = queries.slice(s, s + RERANK_GROUP);
    const { results } = await core.searchVectors(
      group.map((x) => normalize(x.pair.s1)),
      vectors.slice(s * dim, (s + group.length) * dim),
      opts,
      { excludeIds: group.map((x) => x.q) },
    );
    group.forEach((x, j) => {
      const ids = (results[j]?.candidates ?? []).map((c) => c.id);
      ranked.push({
        rank: rankOf(x.t, ids, x.q),
        known: rankOfAny(x.known, ids, x.q),
        group: scheme.retrievalGroup(x.pair.label),
      });
    });
  }
  return ranked;
}

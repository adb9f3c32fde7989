/**
 * Ranks for the retrieval benchmark: where each query's target lands among its neighbours, through an
 * index directly (ANN or exact; s1 itself excluded, ties pessimistic) or through the shared search core
 * after the cross-encoder reranked the first K candidates.
 */
import type { SearchCore } from '../search/core.js';
import { searchOptionsSchema } from '../search/types.js';
import { normalize } from '../text/index.js';
import type { LabelScheme } from '../text/labels.js';
import { firstResult, type RankedQuery, rankOf, rankOfAny } from './metrics.js';
import type { PairQuery } from './retrieval-index.js';

/** What ranking needs besides the index: the queries, their vectors, and where they are reported. */
export interface RankInput {
  queries: readonly PairQuery[];
  /** The queries' s1 vectors, one row each. */
  vectors: Float32Array;
  dim: number;
  scheme: LabelScheme;
}

/** The ranks of one run, per query (in the order of `queries`). */
export interface Ranked {
  ann: RankedQuery[];
  exact?: RankedQuery[] | undefined;
  reranked: { reranker: string; ranks: RankedQuery[] }[];
}

/** Whether the first candidate is a sentence the data label not a paraphrase of the query's s1. */
export const firstIsNegative = (x: PairQuery, r: RankedQuery): boolean =>
  r.first !== undefined && x.negatives.has(r.first);

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

/** RankedQuery.ceiling for one query: its known paraphrases and target among the first `depth` results. */
export function oracleTop1<T>(
  known: ReadonlySet<T>,
  target: T,
  resultIds: readonly T[],
  excludeId: T,
  depth: number,
): { pair: number; anyKnown: number } {
  const first = resultIds.filter((id) => id !== excludeId).slice(0, depth);
  const n = first.filter((id) => known.has(id)).length;
  return { pair: first.includes(target) ? 1 / n : 0, anyKnown: n > 0 ? 1 : 0 };
}

/**
 * The rank of every query's target among the `deepest + 1` nearest neighbours (one more, since s1 itself
 * is among them), undefined when below the deepest depth; `known` the same for its first known paraphrase;
 * with `ceilingDepth`, an oracle reranker's top-1 over that many candidates (`ceiling`).
 */
export async function rankThrough(
  index: Searchable,
  input: RankInput,
  o: { deepest: number; corpusSize: number; nprobe?: number | undefined; ceilingDepth?: number },
): Promise<RankedQuery[]> {
  const { queries, vectors, dim, scheme } = input;
  const deep = Math.min(o.deepest + 1, o.corpusSize);
  const k = Math.min(Math.max(o.deepest, o.ceilingDepth ?? 0) + 1, o.corpusSize);
  const opts = o.nprobe === undefined ? {} : { nprobe: o.nprobe };
  const within = (r: number | undefined) => (r !== undefined && r <= o.deepest ? r : undefined);
  const ranked: RankedQuery[] = [];
  for (let s = 0; s < queries.length; s += SEARCH_BATCH) {
    const part = vectors.subarray(s * dim, Math.min(queries.length, s + SEARCH_BATCH) * dim);
    const { ids, distances } = await index.search(part, k, opts);
    for (let j = 0; j < part.length / dim; j++) {
      const x = queries[s + j] as PairQuery;
      const all = [...ids.subarray(j * k, (j + 1) * k)].map(Number);
      // ranks over the first deepest + 1 only, as without a ceiling (ties are judged within them)
      const row = all.slice(0, deep);
      const scores = [...distances.subarray(j * k, j * k + row.length)];
      ranked.push({
        rank: within(rankOf(x.t, row, x.q, scores)),
        known: within(rankOfAny(x.known, row, x.q, scores)),
        ...(o.ceilingDepth ? { ceiling: oracleTop1(x.known, x.t, all, x.q, o.ceilingDepth) } : {}),
        first: firstResult(all, x.q),
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
        first: firstResult(ids, x.q),
        group: scheme.retrievalGroup(x.pair.label),
      });
    });
  }
  return ranked;
}

/**
 * The retrieval benchmark's per-query rows (`--per-query FILE`, JSON Lines): for each query, where its s2
 * and its first known paraphrase landed and which sentence came first, through ANN, exact search and each
 * reranker. Two models a few queries apart in the figures differ in these rows: which queries, and how.
 */
import { writeFile } from './harness.js';
import type { RankedQuery } from './metrics.js';
import type { PairQuery } from './retrieval-index.js';
import { firstIsNegative, type Ranked } from './retrieval-rank.js';

type Text = (id: number) => string | undefined;

/** One ranking of one query; null where nothing was found within the depths searched. */
const rankingOf = (x: PairQuery, r: RankedQuery | undefined, text: Text) => ({
  rank: r?.rank ?? null,
  known_rank: r?.known ?? null,
  first: r?.first === undefined ? null : (text(r.first) ?? null),
  first_known: r?.first !== undefined && x.known.has(r.first),
  first_negative: r !== undefined && firstIsNegative(x, r),
});

/** A row per query, in `queries` order (the order of the ranks in `ranked`). */
export function perQueryRows(queries: readonly PairQuery[], ranked: Ranked, text: Text) {
  return queries.map((x, i) => ({
    s1: x.pair.s1,
    s2: x.pair.s2,
    label: x.pair.label,
    known: x.known.size,
    ann: rankingOf(x, ranked.ann[i], text),
    ...(ranked.exact ? { exact: rankingOf(x, ranked.exact[i], text) } : {}),
    reranked: Object.fromEntries(ranked.reranked.map((r) => [r.reranker, rankingOf(x, r.ranks[i], text)])),
  }));
}

export function writeJsonLines(file: string, rows: readonly unknown[]): void {
  writeFile(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
}

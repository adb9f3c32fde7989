/**
 * Benchmark metrics (docs/architecture.md "Benchmarks"), pure functions over ranks and labels;
 * JSON-ready results with stable keys.
 *
 * Retrieval (Kanerva et al. 2023, Fig. 8 and 11): each query is a positive pair (s1, s2); s1 is searched and
 * `rank` is the 1-based rank of s2 among the results with s1 itself left out (see rankOf), or undefined when
 * s2 was not among them. For each depth N, top-N accuracy = share of queries with rank <= N; `not_found` =
 * share with no rank within the deepest N (rank undefined or > deepest N); `mrr` = mean of 1/rank, counting
 * 0 for not found within the deepest N (so it is MRR@deepest N). Reported overall and per retrieval group.
 *
 * Classification (Kanerva et al. Table 4/5; Dou et al. Table 2): per-label precision, recall, F1 and support
 * over the union of gold and predicted labels (as sklearn's classification_report), support-weighted averages
 * ('weighted avg'), accuracy, and binary paraphrase P/R/F1 with both gold and predicted labels mapped through
 * the scheme's isPositive. A ratio whose denominator is 0 is 0 (sklearn's zero_division=0): precision of a
 * label never predicted, recall of a label never in gold, F1 when P + R = 0, any share over n = 0.
 */
import type { Reliability } from '../annotations/index.js';
import { type LabelScheme, TURKU_GROUPS } from '../text/labels.js';

// ---------------------------------------------------------------------------------------------- retrieval

export const DEFAULT_DEPTHS: readonly number[] = [1, 10, 100, 1000];

/**
 * 1-based rank of `targetId` in `resultIds` (best first, as the index returns them), counting only entries
 * that are not `excludeId` (the query's own sentence); undefined when the target is not in the list.
 *
 * Ties: when `scores` (parallel to resultIds) are given, the rank is pessimistic — the target is ranked after
 * every other non-excluded result whose score is exactly equal to its own, wherever the index placed it among
 * them. A tie therefore never helps the target, and the rank does not depend on the order in which FAISS
 * happens to return equal-score results (e.g. duplicate sentences). Results with an equal score cut off below
 * the list's end are unknown and not counted. Without scores the rank is the position in the list as given.
 */
export function rankOf<T>(
  targetId: T,
  resultIds: readonly T[],
  excludeId?: T,
  scores?: readonly number[],
): number | undefined {
  return rankOfAny(new Set([targetId]), resultIds, excludeId, scores);
}

/**
 * rankOf with several targets (every sentence known to be a paraphrase of the query): the rank of the first
 * one in the list, ties lost only to results that are not targets.
 */
export function rankOfAny<T>(
  targets: ReadonlySet<T>,
  resultIds: readonly T[],
  excludeId?: T,
  scores?: readonly number[],
): number | undefined {
  if (excludeId !== undefined && targets.has(excludeId)) {
    throw new RangeError('rankOf: the target is the excluded query itself');
  }
  if (scores !== undefined && scores.length !== resultIds.length) {
    throw new RangeError(`rankOf: ${scores.length} scores for ${resultIds.length} results`);
  }
  let rank = 0;
  let at = -1;
  for (const [i, id] of resultIds.entries()) {
    if (excludeId !== undefined && id === excludeId) continue;
    rank++;
    if (targets.has(id)) {
      at = i;
      break;
    }
  }
  if (at < 0) return undefined;
  if (scores === undefined) return rank;
  const score = scores[at];
  for (const [i, id] of resultIds.entries()) {
    if (i <= at || (excludeId !== undefined && id === excludeId)) continue;
    if (scores[i] === score && !targets.has(id)) rank++;
  }
  return rank;
}

/** The first result that is not `excludeId` (the query itself), undefined when there is none. */
export const firstResult = <T>(resultIds: readonly T[], excludeId: T): T | undefined =>
  resultIds.find((id) => id !== excludeId);

export interface RankedQuery {
  /** 1-based rank of the target, undefined when not found within the deepest depth searched. */
  rank: number | undefined;
  /** The same for the first sentence known to be a paraphrase of s1 (the target or another; see PairQuery). */
  known?: number | undefined;
  /**
   * Top-1 of an oracle reranker of the first `ceilingDepth` candidates (rankThrough only): it puts a known
   * paraphrase first but cannot tell them apart, so the pair's own s2 comes first with chance 1 / (known
   * paraphrases among them); `anyKnown` is 1 when one is among them.
   */
  ceiling?: { pair: number; anyKnown: number };
  /** The id of the first candidate (s1 left out), where the ranking knows ids. */
  first?: number | undefined;
  /** Retrieval group (LabelScheme.retrievalGroup of the pair's label). */
  group: string;
}

export interface RetrievalStats {
  n: number;
  /** Depth N (as a string key: "1", "10", …) -> share of queries with rank <= N. */
  top: Record<string, number>;
  not_found: number;
  mrr: number;
}

export interface RetrievalResult extends RetrievalStats {
  kind: 'retrieval';
  /** Per retrieval group, in a stable order (Turku groups in the paper's order, then the rest sorted). */
  labels: Record<string, RetrievalStats>;
}

function checkDepths(depths: readonly number[]): number[] {
  const ds = [...new Set(depths)].sort((a, b) => a - b);
  if (ds.length === 0 || ds.some((d) => !Number.isInteger(d) || d < 1)) {
    throw new RangeError(`depths must be positive integers, got [${depths.join(', ')}]`);
  }
  return ds;
}

function stats(ranks: ReadonlyArray<number | undefined>, depths: number[]): RetrievalStats {
  const n = ranks.length;
  const deepest = depths[depths.length - 1] ?? 0;
  const share = (k: number) => (n === 0 ? 0 : k / n);
  const top: Record<string, number> = {};
  for (const d of depths) top[String(d)] = share(ranks.filter((r) => r !== undefined && r <= d).length);
  const found = ranks.filter((r): r is number => r !== undefined && r <= deepest);
  const mrr = share(found.reduce((s, r) => s + 1 / r, 0));
  return { n, top, not_found: share(n - found.length), mrr };
}

/** Orders group names: Turku groups as in the paper, then the others in code-point order. */
export function groupOrder(a: string, b: string): number {
  const ia = TURKU_GROUPS.indexOf(a);
  const ib = TURKU_GROUPS.indexOf(b);
  if (ia >= 0 || ib >= 0)
    return (ia < 0 ? Number.POSITIVE_INFINITY : ia) - (ib < 0 ? Number.POSITIVE_INFINITY : ib);
  return a < b ? -1 : a > b ? 1 : 0;
}

export function retrievalMetrics(
  queries: readonly RankedQuery[],
  depths: readonly number[] = DEFAULT_DEPTHS,
): RetrievalResult {
  const ds = checkDepths(depths);
  for (const q of queries) {
    if (q.rank !== undefined && (!Number.isInteger(q.rank) || q.rank < 1)) {
      throw new RangeError(`rank must be a positive integer or undefined, got ${q.rank}`);
    }
  }
  const byGroup = new Map<string, Array<number | undefined>>();
  for (const q of queries) {
    const list = byGroup.get(q.group) ?? [];
    list.push(q.rank);
    byGroup.set(q.group, list);
  }
  const labels: Record<string, RetrievalStats> = {};
  for (const g of [...byGroup.keys()].sort(groupOrder)) labels[g] = stats(byGroup.get(g) ?? [], ds);
  return {
    kind: 'retrieval',
    ...stats(
      queries.map((q) => q.rank),
      ds,
    ),
    labels,
  };
}

// ----------------------------------------------------------------------------------------- classification

export interface LabelStats {
  precision: number;
  recall: number;
  f1: number;
  support: number;
}

export interface PRF {
  precision: number;
  recall: number;
  f1: number;
}

export interface MultiClassStats {
  n: number;
  accuracy: number;
  labels: Record<string, LabelStats>;
  weighted: PRF;
}

export interface TurkuStats {
  /** Base labels 1..4: subsumption and flags merged into the base (4<, 4>i -> 4). */
  base: MultiClassStats;
  /** Subsumption direction detection (gold has `<` vs predicted has `<`; same for `>`). */
  subsumption: Record<'<' | '>', LabelStats>;
  /** Flag detection: predicted flag present vs gold flag present; support = gold pairs with the flag. */
  flags: Record<'i' | 's', LabelStats>;
}

export interface ClassificationResult extends MultiClassStats {
  kind: 'classification';
  /** Paraphrase (positive) class; null when the scheme cannot map every gold and predicted label. */
  binary: PRF | null;
  turku?: TurkuStats;
  /** How well the reported P(paraphrase) matches the share of paraphrases (binary gold only). */
  calibration?: Reliability;
}

const ratio = (a: number, b: number) => (b === 0 ? 0 : a / b);
const f1Of = (p: number, r: number) => (p + r === 0 ? 0 : (2 * p * r) / (p + r));

function prf(tp: number, predicted: number, actual: number): LabelStats {
  const precision = ratio(tp, predicted);
  const recall = ratio(tp, actual);
  return { precision, recall, f1: f1Of(precision, recall), support: actual };
}

/** Per-label P/R/F1/support over the union of gold and predicted labels, weighted averages and accuracy. */
export function multiClass(gold: readonly string[], predicted: readonly string[]): MultiClassStats {
  if (gold.length !== predicted.length) {
    throw new RangeError(`${gold.length} gold labels but ${predicted.length} predictions`);
  }
  const names = [...new Set([...gold, ...predicted])].sort();
  const labels: Record<string, LabelStats> = {};
  let correct = 0;
  for (const [i, g] of gold.entries()) if (predicted[i] === g) correct++;
  const weighted = { precision: 0, recall: 0, f1: 0 };
  for (const name of names) {
    let tp = 0;
    let p = 0;
    let a = 0;
    for (const [i, g] of gold.entries()) {
      const isGold = g === name;
      const isPred = predicted[i] === name;
      if (isGold) a++;
      if (isPred) p++;
      if (isGold && isPred) tp++;
    }
    const s = prf(tp, p, a);
    labels[name] = s;
    weighted.precision += s.precision * s.support;
    weighted.recall += s.recall * s.support;
    weighted.f1 += s.f1 * s.support;
  }
  const n = gold.length;
  return {
    n,
    accuracy: ratio(correct, n),
    labels,
    weighted: {
      precision: ratio(weighted.precision, n),
      recall: ratio(weighted.recall, n),
      f1: ratio(weighted.f1, n),
    },
  };
}

/** P/R/F1 of detecting a property: predicted has it vs gold has it; support = gold items with it. */
export function detection(gold: readonly boolean[], predicted: readonly boolean[]): LabelStats {
  let tp = 0;
  let p = 0;
  let a = 0;
  for (const [i, g] of gold.entries()) {
    const q = predicted[i] === true;
    if (g) a++;
    if (q) p++;
    if (g && q) tp++;
  }
  return prf(tp, p, a);
}

/**
 * Classification metrics of `predicted` against `gold` (same order). With a scheme, labels are compared in
 * its canonical spelling (Turku flag order), `binary` is filled when every label maps to positive/negative,
 * and a Turku scheme adds the paper's layout under `turku`.
 */
export function classificationMetrics(
  gold: readonly string[],
  predicted: readonly string[],
  scheme?: LabelScheme,
): ClassificationResult {
  const canon = (l: string) => (scheme ? scheme.canonical(l) : l);
  const g = gold.map(canon);
  const p = predicted.map(canon);
  const main = multiClass(g, p);
  let binary: PRF | null = null;
  if (scheme) {
    const gb = g.map((l) => scheme.isPositive(l));
    const pb = p.map((l) => scheme.isPositive(l));
    if (![...gb, ...pb].includes(undefined)) {
      const { precision, recall, f1 } = detection(gb as boolean[], pb as boolean[]);
      binary = { precision, recall, f1 };
    }
  }
  const result: ClassificationResult = { kind: 'classification', ...main, binary };
  if (scheme?.name === 'turku') {
    const has = (labels: string[], test: (l: string) => boolean) => labels.map(test);
    const sub = (d: '<' | '>') => (l: string) => scheme.subsumption(l) === d;
    const flag = (f: 'i' | 's') => (l: string) => scheme.flags(l).includes(f);
    result.turku = {
      base: multiClass(g.map(scheme.base), p.map(scheme.base)),
      subsumption: {
        '<': detection(has(g, sub('<')), has(p, sub('<'))),
        '>': detection(has(g, sub('>')), has(p, sub('>'))),
      },
      flags: {
        i: detection(has(g, flag('i')), has(p, flag('i'))),
        s: detection(has(g, flag('s')), has(p, flag('s'))),
      },
    };
  }
  return result;
}

/** The q-quantile (0..1) of `xs` by the nearest-rank rule; 0 for none. */
export const quantile = (xs: readonly number[], q: number): number => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};

/**
 * The search core's domain step (see domain/apply.ts for the modes): the queries' σ, which queries and
 * candidates subsampling keeps (candidates are dropped before lexical measures, BERTScore and the
 * cross-encoder, so nothing is spent on them), both sides' σ on every candidate, and the weighted or
 * combined order once the cross-encoder has run.
 */
import {
  type DomainPlan,
  type DomainRequest,
  type Domains,
  keepSide,
  pairScore,
  planDomain,
  type SideScore,
  sideScores,
} from '../domain/index.js';
import type { Meta } from '../store/index.js';
import { positiveProbability } from '../text/labels.js';
import type { QueryContext } from './candidates.js';
import type { Candidate } from './types.js';

export interface QueryDomain {
  plan: DomainPlan;
  /** Per query: its σ and weight, and whether subsampling keeps it. */
  queries: Array<SideScore & { kept: boolean }>;
}

/** The plan and the queries' scores; ids are the queries' index ids where they have one. */
export async function queryDomain(
  domains: Domains | undefined,
  req: DomainRequest,
  canRerank: boolean,
  queries: readonly string[],
  ids: ReadonlyArray<number | null | undefined>,
  vectors: Float32Array,
): Promise<QueryDomain> {
  const plan = await planDomain(domains, req, canRerank);
  const scores = await sideScores(plan.domain, ids, queries, vectors);
  return { plan, queries: scores.map((s) => ({ ...s, kept: keepSide(plan, 'query', s) })) };
}

/** The caller's `keep`, plus dropping queries and candidates that subsampling removes. */
export function withDomainKeep(context: QueryContext, qd: QueryDomain): QueryContext {
  const { plan } = qd;
  const keep = (q: number, c: { id: number; meta?: Meta }) =>
    qd.queries[q]?.kept === true &&
    keepSide(plan, 'candidate', plan.domain.score(c.id)) &&
    (context.keep === undefined || context.keep(q, c));
  return { ...context, keep };
}

/** Both sides' σ on every candidate. */
export function attachDomain(rows: Candidate[][], qd: QueryDomain): void {
  const domain = qd.plan.domain;
  rows.forEach((row, q) => {
    const query = qd.queries[q] as SideScore;
    for (const c of row) {
      c.domain = {
        ...domain.score(c.id),
        querySigma: query.sigma,
        queryWeight: query.weight,
      };
    }
  });
}

/** Weighted / combined: every candidate's domain score, rows re-ordered by it (stable). */
export function orderByDomain(rows: Candidate[][], qd: QueryDomain, positive: readonly string[]): void {
  if (qd.plan.mode === 'subsample') return;
  for (const row of rows) {
    for (const c of row) {
      const d = c.domain;
      if (d === undefined) continue;
      const p = c.probabilities ? positiveProbability(c.probabilities, positive) : undefined;
      const score = pairScore(
        qd.plan,
        { cosine: c.cosine, rerankProbability: p },
        { sigma: d.querySigma, weight: d.queryWeight },
        { sigma: d.sigma, weight: d.weight },
      );
      if (score !== undefined) d.score = score;
    }
    row.sort((a, b) => (b.domain?.score ?? 0) - (a.domain?.score ?? 0));
  }
}

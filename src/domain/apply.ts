/**
 * How a search or a job uses a domain (`"domain": {...}` in a request):
 *
 *  - subsample: keep sentences with σ below the threshold (default the change point, σ = 0; or the σ
 *    below which `topFraction` of the index lies), on the query side, the candidate side or both;
 *  - weighted: order pairs by base × √(w_a · w_b), base = the reranker's paraphrase probability when it
 *    ran, else the cosine, w = the sentences' weights (H_gen / H_in for M-L);
 *  - combined: order pairs by the logistic regression `paramine domain fit` stored with the domain.
 *
 * A threshold or topFraction given with weighted or combined subsamples as well.
 */
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import { sigmaAtFraction } from './distribution.js';
import { logit, sigmoid } from './logistic.js';
import { type CombinedFeature, type CombinedModel, domainNameSchema } from './manifest.js';
import type { Domains, OpenDomain } from './open.js';

export const domainRequestSchema = z
  .object({
    name: domainNameSchema,
    mode: z.enum(['subsample', 'weighted', 'combined']).default('subsample'),
    threshold: z.number().optional().describe('Keep sentences with σ below this (not with topFraction).'),
    topFraction: z
      .number()
      .gt(0)
      .max(1)
      .optional()
      .describe('Keep the most in-domain fraction of the index (not with threshold).'),
    apply: z.enum(['queries', 'candidates', 'both']).default('both'),
  })
  .strict()
  .refine((d) => d.threshold === undefined || d.topFraction === undefined, {
    message: 'give threshold or topFraction, not both',
    path: ['threshold'],
  })
  .meta({
    id: 'DomainRequest',
    description: [
      'Use a domain of the index (`paramine domain add`; docs/domains.md). Every sentence has a domain',
      'score σ (lower = more in-domain; Moore-Lewis H_in - H_gen in bits/token, or the embedding',
      'method’s log-odds) and a weight (H_gen / H_in; 2 P(in-domain)). `subsample` keeps sentences with',
      'σ below `threshold` (default the change point 0, or the σ below which `topFraction` of the index',
      'lies) on the sides `apply` names; `weighted` orders pairs by base x sqrt(w_query x w_candidate)',
      '(base = paraphrase probability when reranked, else cosine); `combined` orders them by the',
      'logistic regression `paramine domain fit` stored. A threshold with weighted or combined subsamples',
      'too. Unknown domain: 404 NOT_FOUND; a domain scored on another build of the index: 409 CONFLICT;',
      'combined without a fit (or without the reranker its fit used): 400.',
    ].join('\n'),
  });
export type DomainRequestInput = z.input<typeof domainRequestSchema>;
export type DomainRequest = z.output<typeof domainRequestSchema>;

export interface SideScore {
  sigma: number;
  weight: number;
}

export interface DomainPlan {
  domain: OpenDomain;
  mode: DomainRequest['mode'];
  apply: DomainRequest['apply'];
  /** σ must be below this on the sides `apply` names; undefined: no subsampling. */
  threshold: number | undefined;
  combined?: CombinedModel | undefined;
}

export async function planDomain(
  domains: Domains | undefined,
  req: DomainRequest,
  canRerank: boolean,
): Promise<DomainPlan> {
  if (domains === undefined) {
    throw new ParamineError('NOT_FOUND', 'this service has no domains (it serves no index directory)', {
      field: 'domain.name',
    });
  }
  const domain = await domains.get(req.name);
  const e = domain.entry;
  const threshold =
    req.threshold ??
    (req.topFraction !== undefined
      ? sigmaAtFraction(e.quantileTable, req.topFraction)
      : req.mode === 'subsample'
        ? e.changePoint.sigma
        : undefined);
  const plan: DomainPlan = { domain, mode: req.mode, apply: req.apply, threshold };
  if (req.mode === 'combined') {
    if (e.combined === undefined) {
      throw new ParamineError(
        'BAD_INPUT',
        `domain '${e.name}' has no combined model yet; fit one with paramine domain fit`,
        { field: 'domain.mode' },
      );
    }
    if (e.combined.features.includes('rerankProbability') && !canRerank) {
      throw new ParamineError(
        'BAD_INPUT',
        `the combined model of domain '${e.name}' uses reranker probabilities: turn reranking on`,
        { field: 'domain.mode' },
      );
    }
    plan.combined = e.combined;
  }
  return plan;
}

/**
 * σ and weight of sentences: from the columns for those with an index id, from the scorer otherwise
 * (its LMs, or for the embedding method the sentence's vector: rows of `vectors`, in the same order).
 */
export async function sideScores(
  domain: OpenDomain,
  ids: ReadonlyArray<number | null | undefined>,
  texts: readonly string[],
  vectors?: Float32Array,
): Promise<SideScore[]> {
  const out: SideScore[] = texts.map((_, i) => {
    const id = ids[i];
    return id === null || id === undefined ? { sigma: Number.NaN, weight: Number.NaN } : domain.score(id);
  });
  const missing = out.flatMap((s, i) => (Number.isNaN(s.sigma) ? [i] : []));
  if (missing.length === 0) return out;
  const scorer = await domain.scorer();
  let vecs: Float32Array | undefined;
  if (scorer.needsVectors) {
    const d = scorer.dim ?? 0;
    if (vectors === undefined) throw new ParamineError('INTERNAL', 'domain scoring needs the query vectors');
    vecs = new Float32Array(missing.length * d);
    missing.forEach((i, k) => {
      vecs?.set(vectors.subarray(i * d, (i + 1) * d), k * d);
    });
  }
  const scored = scorer.score(
    missing.map((i) => texts[i] as string),
    vecs,
  );
  missing.forEach((i, k) => {
    out[i] = { sigma: scored.sigma[k]!, weight: scored.weight[k]! };
  });
  return out;
}

/** Whether a side survives subsampling. */
export function keepSide(plan: DomainPlan, side: 'query' | 'candidate', s: SideScore): boolean {
  if (plan.threshold === undefined) return true;
  const applies = plan.apply === 'both' || plan.apply === (side === 'query' ? 'queries' : 'candidates');
  return !applies || s.sigma < plan.threshold;
}

/** Feature values of a pair in the combined model's order. */
export function combinedFeatures(
  features: readonly CombinedFeature[],
  pair: { cosine: number; rerankProbability?: number | undefined },
  a: SideScore,
  b: SideScore,
): number[] {
  return features.map((f) => {
    switch (f) {
      case 'cosine':
        return pair.cosine;
      case 'rerankProbability':
        return pair.rerankProbability ?? 0;
      case 'sigmaMin':
        return Math.min(a.sigma, b.sigma);
      case 'sigmaMax':
        return Math.max(a.sigma, b.sigma);
    }
    return 0;
  });
}

/** The pair's domain score (higher = better), or undefined in subsample mode (the order stays). */
export function pairScore(
  plan: DomainPlan,
  pair: { cosine: number; rerankProbability?: number | undefined },
  a: SideScore,
  b: SideScore,
): number | undefined {
  if (plan.mode === 'weighted') {
    const base = pair.rerankProbability ?? pair.cosine;
    return base * Math.sqrt(Math.max(a.weight, 0) * Math.max(b.weight, 0));
  }
  if (plan.mode === 'combined' && plan.combined) {
    const m = plan.combined;
    return sigmoid(logit(m, combinedFeatures(m.features, pair, a, b)));
  }
  return undefined;
}

/** Shapes of the one search + rerank core that the server, the job runner and the benchmark share. */
import { z } from 'zod';
import { domainRequestSchema } from '../domain/index.js';
import type { Meta } from '../store/index.js';
import type { PairDiff } from '../text/index.js';
import { type LexicalMeasures, lexicalFilterSchema } from './lexical.js';

export const MAX_K = 1000;
export const MAX_CANDIDATES = 2000;

export const searchOptionsSchema = z
  .object({
    /** Candidates returned per query. */
    k: z.number().int().min(1).max(MAX_K).default(10),
    /** ANN candidates fetched (and reranked when rerank is on); at least k. */
    candidates: z.number().int().min(1).max(MAX_CANDIDATES).optional(),
    nprobe: z.number().int().min(1).max(65536).optional(),
    /**
     * Wanted recall@10 of the ANN search: the cheapest operating point of the index reaching it (see
     * GET /v1/index); nprobe given beside it wins.
     */
    recall: z.number().gt(0).max(1).optional(),
    rerank: z.boolean().default(true),
    /** Keep only candidates whose predicted label is one of these. */
    labels: z.array(z.string().min(1)).min(1).optional(),
    /** Keep only candidates whose predicted label's probability is at least this. */
    minProbability: z.number().min(0).max(1).optional(),
    minCosine: z.number().min(-1).max(1).optional(),
    filter: lexicalFilterSchema.default({}),
    /** Drop candidates whose dedup key equals the query's (the query itself, re-cased or re-punctuated). */
    excludeDuplicates: z.boolean().default(true),
    /** Give each candidate the word-level diff of the query and its text. */
    diff: z.boolean().optional(),
    /** Restrict to, weight by, or score with a domain of the index (see docs/domains.md). */
    domain: domainRequestSchema.optional(),
  })
  .strict();
export type SearchOptionsInput = z.input<typeof searchOptionsSchema>;
export type SearchOptions = z.output<typeof searchOptionsSchema>;

export interface Candidate {
  id: number;
  text: string;
  /** Cosine similarity (inner product of unit vectors; for an L2 index, 1 - d/2). */
  cosine: number;
  /** 1-based rank in the ANN result, and after reranking when it ran. */
  annRank: number;
  rerankRank?: number;
  label?: string;
  probabilities?: Record<string, number>;
  lexical: LexicalMeasures;
  /** BERTScore F1 with the query, when filter.bertScoreMin asked for it. */
  bertScore?: number;
  /** With a domain: both sides' σ and weight, and the weighted / combined score that orders the row. */
  domain?: CandidateDomain;
  meta?: Meta;
  /** With `diff: true`: query (a) against this candidate (b). */
  diff?: PairDiff;
}

export interface CandidateDomain {
  sigma: number;
  weight: number;
  querySigma: number;
  queryWeight: number;
  score?: number;
}

export interface QueryResult {
  query: string;
  candidates: Candidate[];
  /** With a domain: the query's σ and weight, and whether subsampling kept it (no candidates if not). */
  domain?: { sigma: number; weight: number; kept: boolean };
}

export interface Timings {
  encodeMs: number;
  searchMs: number;
  rerankMs: number;
  totalMs: number;
}

export interface SearchResponse {
  results: QueryResult[];
  /** With rerank: how the candidates are ordered ('cosine' where the model's order was found to hurt). */
  order?: 'probability' | 'cosine';
  timings: Timings;
}

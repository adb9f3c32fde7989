/** Shapes of the one search + rerank core that the server, the job runner and the benchmark share. */
import { z } from 'zod';
import { domainRequestSchema } from '../domain/index.js';
import { LABEL_MODES, type LabelMode } from '../models/ports.js';
import type { Meta } from '../store/index.js';
import type { PairDiff } from '../text/index.js';
import { type LexicalMeasures, lexicalFilterSchema } from './lexical.js';

export const MAX_K = 1000;
/** Candidates a query returns when it names no `k` (the page and GET /v1/config say the same). */
export const DEFAULT_K = 10;
export const MAX_CANDIDATES = 2000;

/** Who labels pairs: declared once, for search, classify, jobs and the CLI. */
export const labelModeSchema = z
  .enum(LABEL_MODES)
  .describe(
    '`fast` - the student cross-encoder alone; `balanced` (default) - the student, and the teacher for ' +
      'the pairs whose P(paraphrase) falls in the band around the cut written in the student’s config ' +
      '(where it names a teacher); `best` - the teacher for every pair. Each pair says which model labeled it.',
  );

export const searchOptionsSchema = z
  .object({
    k: z.number().int().min(1).max(MAX_K).default(DEFAULT_K).describe('Candidates returned per query.'),
    candidates: z
      .number()
      .int()
      .min(1)
      .max(MAX_CANDIDATES)
      .optional()
      .describe(
        'ANN neighbours fetched per query (and reranked when reranking); raised to `k` when smaller.',
      ),
    nprobe: z
      .number()
      .int()
      .min(1)
      .max(65536)
      .optional()
      .describe('IVF lists visited per shard (default from the index manifest); wins over `recall`.'),
    recall: z
      .number()
      .gt(0)
      .max(1)
      .optional()
      .describe(
        'Wanted recall@10 of the ANN search: the index’s cheapest operating point reaching it (its nprobe, ' +
          'efSearch and kFactor; see `GET /v1/index`). 400 (field `recall`) when the index has no measured ' +
          'operating points (`paramine tune`); exact (Flat) indexes ignore it.',
      ),
    rerank: z.boolean().default(true).describe('Rerank with the cross-encoder when one is loaded.'),
    labels: z
      .union([
        z.array(z.string().min(1)).min(1),
        z
          .object({
            mode: labelModeSchema.optional(),
            keep: z
              .array(z.string().min(1))
              .min(1)
              .optional()
              .describe('Keep only candidates whose served label is one of these.'),
          })
          .strict(),
      ])
      .optional()
      .describe(
        'Who labels and which labels to keep (needs a reranker): `{mode, keep}`, or the labels to keep alone ' +
          '(an array, as before).',
      ),
    minProbability: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe('Keep only candidates whose predicted label has at least this probability.'),
    minCosine: z
      .number()
      .min(-1)
      .max(1)
      .optional()
      .describe('Drop ANN candidates below this cosine similarity.'),
    filter: lexicalFilterSchema.default({}),
    excludeDuplicates: z
      .boolean()
      .default(true)
      .describe(
        'Drop candidates whose dedup key equals the query’s (the query itself, re-cased or re-punctuated).',
      ),
    diff: z
      .boolean()
      .optional()
      .describe('Give each candidate `diff`, the word-level diff of the query and the candidate.'),
    domain: domainRequestSchema.optional(),
  })
  .strict();
/** The labels a search keeps (undefined: all). */
export function keptLabels(o: Pick<SearchOptions, 'labels'>): readonly string[] | undefined {
  return Array.isArray(o.labels) ? o.labels : o.labels?.keep;
}

/** Who labels a search's pairs (undefined: the service's default). */
export function labelMode(o: Pick<SearchOptions, 'labels'>): LabelMode | undefined {
  return Array.isArray(o.labels) ? undefined : o.labels?.mode;
}

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
  /** The served label (rerank/core.ts: the positive label when calibrated P >= the model's cut). */
  label?: string;
  probabilities?: Record<string, number>;
  /** The model that labeled the pair: the student or, in a cascade, the teacher. */
  labeledBy?: string;
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

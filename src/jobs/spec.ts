/**
 * What a mining job is asked to do: one zod schema for the HTTP body and the `paramine mine` flags, so
 * both front ends accept exactly the same jobs.
 */
import { z } from 'zod';
import { domainRequestSchema } from '../domain/index.js';
import { PARASCI_BERTSCORE_MIN } from '../search/bertscore.js';
import { type LexicalFilter, lexicalFilterSchema } from '../search/lexical.js';

export const MAX_JOB_K = 100;
export const MAX_INLINE_SENTENCES = 10_000;

/** The papers' pair filters by name; explicit `filter` fields override them. */
export const FILTER_PRESETS: Record<'multipit' | 'paratag' | 'parasci', LexicalFilter> = {
  /** MultiPIT (Dou et al. 2022): at least 5 tokens a side, BLEU <= 14. */
  multipit: { minTokens: 5, bleuMax: 14 },
  /** ParaTag: 5 < BLEU < 20 (bleuMax is inclusive here), >= 10 characters a side, length ratio < 2.5. */
  paratag: { bleuMin: 5, bleuMax: 20, minChars: 10, lengthRatioMax: 2.5 },
  /** ParaSCI (Dong et al. 2021): PLR < 1.0; add excludeSameGroup with the paper key as well. */
  parasci: { plrMax: 1, bertScoreMin: PARASCI_BERTSCORE_MIN },
};

const scopeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('all') }).strict(),
  z
    .object({ kind: z.literal('range'), start: z.number().int().min(0), end: z.number().int().min(1) })
    .strict()
    .refine((r) => r.start < r.end, { message: 'start must be below end', path: ['start'] }),
  z
    .object({
      kind: z.literal('sentences'),
      sentences: z
        .array(z.string().min(1).max(2000))
        .min(1)
        .max(MAX_INLINE_SENTENCES, `at most ${MAX_INLINE_SENTENCES} inline sentences; use a file`),
    })
    .strict(),
  /** A corpus file (txt/jsonl/tsv, gzip too) under the service's data directory, relative to it. */
  z.object({ kind: z.literal('file'), path: z.string().min(1) }).strict(),
]);

export const jobSpecSchema = z
  .object({
    /** Name of the index to mine (the served one); default: the served one. */
    index: z.string().min(1).optional(),
    scope: scopeSchema.default({ kind: 'all' }),
    /** Neighbours examined per query sentence (paraphrase_mining's top_k). */
    k: z.number().int().min(1).max(MAX_JOB_K).default(10),
    nprobe: z.number().int().min(1).max(65536).optional(),
    minCosine: z.number().min(-1).max(1).optional(),
    /**
     * Ratio margin (Artetxe & Schwenk 2019): cos(x, y) / ((mean cos of x to its k nearest neighbours +
     * the same for y) / 2). Present: every pair gets its margin; `min` also filters on it.
     */
    margin: z
      .object({ k: z.number().int().min(1).max(MAX_JOB_K).default(4), min: z.number().min(0).optional() })
      .strict()
      .optional(),
    /** Present: pairs are labeled by the cross-encoder; `labels`/`minProbability` keep some of them. */
    rerank: z
      .object({
        labels: z.array(z.string().min(1)).min(1).optional(),
        minProbability: z.number().min(0).max(1).optional(),
      })
      .strict()
      .optional(),
    preset: z.enum(['multipit', 'paratag', 'parasci']).optional(),
    filter: lexicalFilterSchema.default({}),
    /** Drop pairs whose two sentences share this metadata value (ParaSCI: same paper). */
    excludeSameGroup: z.string().min(1).optional(),
    /** Mine within a domain of the index: subsample, weighted or combined (docs/domains.md). */
    domain: domainRequestSchema.optional(),
    /** Group accepted pairs into multi-reference sets (union-find, as MultiPIT's NMR set). */
    cluster: z.boolean().default(false),
    /** Query sentences per batch: one checkpoint each. Smaller batches interleave better with queries. */
    batchSize: z.number().int().min(1).max(4096).default(128),
  })
  .strict();

export type JobSpecInput = z.input<typeof jobSpecSchema>;
export type JobSpec = z.output<typeof jobSpecSchema>;
export type JobScope = JobSpec['scope'];

/** The filter a job applies: its preset, then its explicit fields. */
export function effectiveFilter(spec: JobSpec): LexicalFilter {
  return { ...(spec.preset ? FILTER_PRESETS[spec.preset] : {}), ...spec.filter };
}

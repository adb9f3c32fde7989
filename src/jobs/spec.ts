/**
 * What a mining job is asked to do: one zod schema for the HTTP body and the `paramine mine` flags, so
 * both front ends accept exactly the same jobs.
 */
import { z } from 'zod';
import { domainRequestSchema } from '../domain/index.js';
import { PARASCI_BERTSCORE_MIN, PARASCI_DEFINITIONS_BERTSCORE_MIN } from '../search/bertscore.js';
import { type LexicalFilter, lexicalFilterSchema } from '../search/lexical.js';

export const MAX_JOB_K = 100;
export const MAX_INLINE_SENTENCES = 10_000;

/** The papers' pair filters by name; explicit `filter` fields override them. */
export const FILTER_PRESETS: Record<'multipit' | 'paratag' | 'parasci', LexicalFilter> = {
  /** MultiPIT (Dou et al. 2022): at least 5 tokens a side, BLEU <= 14. */
  multipit: { minTokens: 5, bleuMax: 14 },
  /** ParaTag: 5 < BLEU < 20 (bleuMax is inclusive here), >= 10 characters a side, length ratio < 2.5. */
  paratag: { bleuMin: 5, bleuMax: 20, minChars: 10, lengthRatioMax: 2.5 },
  /**
   * ParaSCI (Dong et al. 2021): PLR < 1.0. The paper's main source of pairs is sentences of the same paper
   * in different sections: mine them with the `parasci-intra` preset (withinGroup paper, excludeSame
   * section), not by excluding the same paper.
   */
  parasci: { plrMax: 1, bertScoreMin: PARASCI_BERTSCORE_MIN },
};

export interface JobPreset {
  filter: LexicalFilter;
  minCosine?: number;
  withinGroup?: string | string[];
  excludeSame?: string[];
  negatives?: boolean;
}

/**
 * Cosine threshold that stands for ParaSCI's 0.931 on BERT with the default encoder (all-MiniLM-L6-v2):
 * the cosine at the 2nd percentile of ParaSCI-ACL val pairs (0.425), so 98% of true pairs stay candidates
 * (docs/scopes.md, BENCHMARKS.md).
 */
export const PARASCI_COSINE = 0.42;

/** The papers' recipes as whole jobs: scope, filters and thresholds; explicit spec fields override them. */
export const JOB_PRESETS: Record<string, JobPreset> = {
  multipit: { filter: FILTER_PRESETS.multipit, withinGroup: ['trend', 'url'] },
  paratag: { filter: FILTER_PRESETS.paratag },
  parasci: { filter: FILTER_PRESETS.parasci },
  'parasci-intra': {
    // ParaSCI's BERTScore > 0.7 (SciBERT) on this encoder's scale (docs/bertscore.md).
    filter: { plrMax: 1, bertScoreMin: PARASCI_BERTSCORE_MIN },
    minCosine: PARASCI_COSINE,
    withinGroup: 'paper',
    excludeSame: ['section'],
  },
  // ParaSCI's definition pairs: BERTScore > 0.6 (SciBERT) and PLR < 2.
  'parasci-definitions': {
    filter: { plrMax: 2, bertScoreMin: PARASCI_DEFINITIONS_BERTSCORE_MIN },
    withinGroup: 'term',
  },
  'parasci-citations': {
    filter: { plrMax: 1, bertScoreMin: PARASCI_BERTSCORE_MIN },
    minCosine: PARASCI_COSINE,
    withinGroup: 'cites',
  },
  'turku-negatives': { filter: {}, withinGroup: 'source', negatives: true },
};
export const PRESET_NAMES = Object.keys(JOB_PRESETS) as [string, ...string[]];

const groupKey = z.string().min(1).max(200);

/** A window on an ordered key: pairs whose values differ by at most `days` (dates) or `width` (numbers). */
export const windowSchema = z
  .object({
    key: groupKey,
    days: z.number().positive().max(36_500).optional(),
    width: z.number().positive().optional(),
  })
  .strict()
  .refine((w) => (w.days === undefined) !== (w.width === undefined), {
    message: 'give days (a date key) or width (a number key), one of them',
    path: ['days'],
  });

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

/** The span model `subSentence: {method: "span"}` uses unless the job names one (scripts/train_span.py). */
export const DEFAULT_SPAN_MODEL = 'paramine-span-minilm-q';
const spanCosine = z.number().min(-1).max(1).default(0.7);

export const jobSpecSchema = z
  .object({
    /** Name of the index to mine (the served one); default: the served one. */
    index: z.string().min(1).optional(),
    scope: scopeSchema.default({ kind: 'all' }),
    /** Neighbours examined per query sentence (paraphrase_mining's top_k). */
    k: z.number().int().min(1).max(MAX_JOB_K).default(10),
    nprobe: z.number().int().min(1).max(65536).optional(),
    /** Wanted recall@10 of the ANN search: the index's cheapest operating point reaching it. */
    recall: z.number().gt(0).max(1).optional(),
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
    preset: z.enum(PRESET_NAMES).optional(),
    filter: lexicalFilterSchema.default({}),
    /** Pairs only between sentences sharing a value under this key (or any of these keys). */
    withinGroup: z.union([groupKey, z.array(groupKey).min(1).max(8)]).optional(),
    /** Pairs only between sentences whose ordered values lie within the window. */
    window: windowSchema.optional(),
    /** Never pair sentences sharing a value under any of these keys (ParaSCI: same section). */
    excludeSame: z.array(groupKey).min(1).max(8).optional(),
    /** The older one-key form of excludeSame (kept as an alias). */
    excludeSameGroup: groupKey.optional(),
    /** Mine within a domain of the index: subsample, weighted or combined (docs/domains.md). */
    domain: domainRequestSchema.optional(),
    /**
     * Sub-sentence pairs (ParaSCI): a candidate the whole-sentence filters reject is tried again with a span
     * of the longer sentence: the clause run closest to the shorter one (best-clause), or the span a span
     * model points at (span: scripts/train_span.py's model, by name or directory); kept pairs carry `span`.
     */
    subSentence: z
      .discriminatedUnion('method', [
        z.object({ method: z.literal('best-clause'), minCosine: spanCosine }).strict(),
        z
          .object({
            method: z.literal('span'),
            model: z.string().min(1).max(500).default(DEFAULT_SPAN_MODEL),
            minCosine: spanCosine,
          })
          .strict(),
      ])
      .optional(),
    /** Emit the top-k pairs the filters or the cross-encoder reject (hard negatives) instead. */
    negatives: z.boolean().optional(),
    /** Scopes up to this many members are searched exactly over the kept embeddings, larger ones via the index. */
    exactMax: z.number().int().min(0).optional(),
    /** Group accepted pairs into multi-reference sets (union-find, as MultiPIT's NMR set). */
    cluster: z.boolean().default(false),
    /** Query sentences per batch: one checkpoint each. Smaller batches interleave better with queries. */
    batchSize: z.number().int().min(1).max(4096).default(128),
  })
  .strict();

export type JobSpecInput = z.input<typeof jobSpecSchema>;
export type JobSpec = z.output<typeof jobSpecSchema>;
export type JobScope = JobSpec['scope'];

const presetOf = (spec: JobSpec): JobPreset | undefined =>
  spec.preset === undefined ? undefined : JOB_PRESETS[spec.preset];

/** The filter a job applies: its preset, then its explicit fields. */
export function effectiveFilter(spec: JobSpec): LexicalFilter {
  return { ...(presetOf(spec)?.filter ?? {}), ...spec.filter };
}

/** The job's scope and thresholds: its preset, then its explicit fields. */
export function effectiveScope(spec: JobSpec): {
  withinGroup: string[];
  window: JobSpec['window'];
  excludeSame: string[];
  minCosine: number | undefined;
  negatives: boolean;
} {
  const p = presetOf(spec);
  const within = spec.withinGroup ?? p?.withinGroup;
  const excludeSame = [
    ...new Set([
      ...(spec.excludeSame ?? p?.excludeSame ?? []),
      ...(spec.excludeSameGroup ? [spec.excludeSameGroup] : []),
    ]),
  ];
  return {
    withinGroup: within === undefined ? [] : Array.isArray(within) ? within : [within],
    window: spec.window,
    excludeSame,
    minCosine: spec.minCosine ?? p?.minCosine,
    negatives: spec.negatives ?? p?.negatives ?? false,
  };
}

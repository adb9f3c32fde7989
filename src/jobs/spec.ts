/**
 * What a mining job is asked to do: one zod schema for the HTTP body and the `paramine mine` flags, so
 * both front ends accept exactly the same jobs.
 */
import { z } from 'zod';
import { domainRequestSchema } from '../domain/index.js';
import { PARASCI_BERTSCORE_MIN, PARASCI_DEFINITIONS_BERTSCORE_MIN } from '../search/bertscore.js';
import { type LexicalFilter, lexicalFilterSchema } from '../search/lexical.js';
import { labelModeSchema } from '../search/types.js';
import { alignOptionsSchema } from './align.js';

/** Query sentences per checkpoint of a mining job, from the API, the page and `paramine mine` alike. */
export const DEFAULT_BATCH_SIZE = 128;

/**
 * The first batch of a run: at least FAISS's distance_compute_blas_threshold (20), below which exact search
 * takes another kernel that rounds differently, so one-machine and distributed runs stay pair for pair.
 */
const FIRST_BATCH = 32;

/**
 * The size of a run's n-th batch: from 32 doubling up to the job's batchSize, so progress (committed per
 * batch) moves within seconds even when one full batch, reranked, takes a minute; a long job's batches
 * are batchSize after a few.
 */
export const rampedBatchSize = (n: number, batchSize: number): number =>
  Math.min(batchSize, FIRST_BATCH * 2 ** Math.min(n, 20));

export const MAX_JOB_K = 100;
/** Most neighbours of a new sentence a `since` job checks (reverseDepth). */
export const MAX_REVERSE_DEPTH = 1024;
/** reverseDepth's default for a job of k neighbours. */
export const defaultReverseDepth = (k: number): number => Math.min(MAX_REVERSE_DEPTH, Math.max(10 * k, 100));
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
    .refine((r) => r.start < r.end, { message: 'start must be below end', path: ['start'] })
    .describe('Index ids in [start, end).'),
  z
    .object({
      kind: z.literal('sentences'),
      sentences: z
        .array(z.string().min(1).max(2000))
        .min(1)
        .max(MAX_INLINE_SENTENCES, `at most ${MAX_INLINE_SENTENCES} inline sentences; use a file`),
    })
    .strict(),
  z
    .object({ kind: z.literal('file'), path: z.string().min(1) })
    .strict()
    .describe(
      'A corpus file (txt, jsonl, tsv/csv; gzip too) relative to the service’s `--data-dir`; paths leaving it are a 400.',
    ),
]);

/** The span model `subSentence: {method: "span"}` uses unless the job names one (paramine-train span). */
export const DEFAULT_SPAN_MODEL = 'paramine-span-minilm-q';
const spanCosine = z.number().min(-1).max(1).default(0.7);

const lines = (...l: string[]): string => l.join('\n');

export const jobSpecSchema = z
  .object({
    index: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Name of the index to mine (the served index’s directory name); default the served one. Another name is a 404.',
      ),
    scope: scopeSchema.default({ kind: 'all' }).describe('The query sentences; default `{"kind": "all"}`.'),
    k: z
      .number()
      .int()
      .min(1)
      .max(MAX_JOB_K)
      .default(10)
      .describe('Nearest neighbours examined per query sentence (paraphrase_mining’s top_k).'),
    nprobe: z.number().int().min(1).max(65536).optional(),
    recall: z
      .number()
      .gt(0)
      .max(1)
      .optional()
      .describe(
        lines(
          'Wanted recall@10 of the ANN search: the index’s cheapest operating point reaching it (see',
          '`GET /v1/index`); `nprobe` given beside it wins. 400 (field `recall`) when the index has no',
          'measured operating points (`paramine tune`); exact (Flat) indexes ignore it.',
        ),
      ),
    minCosine: z.number().min(-1).max(1).optional(),
    margin: z
      .object({ k: z.number().int().min(1).max(MAX_JOB_K).default(4), min: z.number().min(0).optional() })
      .strict()
      .optional()
      .describe(
        'Ratio margin (Artetxe & Schwenk 2019) - cos(x, y) over the mean of x’s and y’s mean cosine to their ' +
          '`k` nearest neighbours. Each pair gets `margin`; `min` drops pairs below it.',
      ),
    rerank: z
      .object({
        labels: z.array(z.string().min(1)).min(1).optional(),
        minProbability: z.number().min(0).max(1).optional(),
        mode: labelModeSchema.optional(),
      })
      .strict()
      .optional()
      .describe('Present - label pairs with the cross-encoder (a 400 when none is loaded).'),
    preset: z
      .enum(PRESET_NAMES)
      .optional()
      .describe(
        lines(
          'The papers’ recipes; explicit fields override them. `multipit` - withinGroup [trend, url], at',
          'least 5 tokens a side, BLEU <= 14. `paratag` - 5 < BLEU < 20, >= 10 characters, length ratio',
          '< 2.5. `parasci` - PLR < 1.0. `parasci-intra` - withinGroup paper, excludeSame [section], the',
          'cosine standing for ParaSCI’s 0.931 on BERT (docs/scopes.md), PLR < 1.0. `parasci-definitions` -',
          'withinGroup term (the definition tagger fills it on a plain corpus), PLR < 2.',
          '`parasci-citations` - withinGroup cites, the calibrated cosine, PLR < 1.0. `turku-negatives` -',
          'withinGroup source, negatives (use with k 5 and rerank, as Kanerva et al.).',
        ),
      ),
    filter: lexicalFilterSchema.default({}),
    withinGroup: z
      .union([groupKey, z.array(groupKey).min(1).max(8)])
      .optional()
      .describe(
        lines(
          'Pairs only between sentences sharing a value under this metadata key (or any of these keys):',
          'paper, trend, url, cited paper, defined term, source. Needs the index’s group table for the key',
          '(`paramine index --group-keys` or `paramine groups build`; a 400 names the missing key). Each',
          'query’s top `k` are taken among its group’s members: groups up to `exactMax` members are',
          'searched exactly over the kept embeddings, larger ones through the index with an id selector.',
        ),
      ),
    window: windowSchema
      .optional()
      .describe(
        lines(
          'Pairs only between sentences whose values of an ordered key differ by at most `days` (a key',
          'built as KEY:date - ISO-8601 dates) or `width` (KEY:number). Exactly one of `days` and `width`;',
          'a 400 otherwise, and for a key whose table is not ordered.',
        ),
      ),
    excludeSame: z
      .array(groupKey)
      .min(1)
      .max(8)
      .optional()
      .describe(
        'Never pair sentences sharing a value under any of these metadata keys (ParaSCI - same section).',
      ),
    excludeSameGroup: groupKey.optional().describe('The older one-key form of `excludeSame` (an alias).'),
    docPairs: z
      .object({
        path: z.string().min(1).optional(),
        align: alignOptionsSchema
          .omit({ docKey: true })
          .partial()
          .strict()
          .optional()
          .describe(
            lines(
              'Align the documents first, as `paramine docs align` does with these options (method tfidf|mean|hybrid,',
              'min, max, partners, same, differ, windowKey, days, dim), then mine within the pairs found.',
            ),
          ),
        docKey: groupKey.default('doc'),
      })
      .strict()
      .refine((d) => (d.path === undefined) !== (d.align === undefined), {
        message: 'give the pairs file (path) or the alignment to run (align), one of them',
      })
      .optional()
      .describe(
        lines(
          "Mine within document pairs: each sentence looks for candidates only in its document's partner",
          'documents. `path`: a pairs file (`paramine docs align` output: JSON lines with `a` and `b`, the',
          "documents' ids) relative to the service's `--data-dir`; or `align`: the job aligns the documents",
          'itself as its first stage; `docKey`: the group key of the documents (default doc).',
        ),
      ),
    domain: domainRequestSchema.optional(),
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
      .optional()
      .describe(
        lines(
          'Sub-sentence pairs (ParaSCI): a candidate the whole-sentence filters reject is tried again with a',
          'span of the longer sentence: the clause run closest to the shorter one by the encoder’s cosine',
          '(`best-clause`), or the span a span model points at (`span`: paramine-train span’s model, by',
          `name under models/ or directory; default \`${DEFAULT_SPAN_MODEL}\`). Either way the (shorter, span)`,
          'pair must pass the filters and reach `minCosine`; kept pairs carry `span`.',
        ),
      ),
    negatives: z
      .boolean()
      .optional()
      .describe(
        'Emit the top-`k` candidates the filters or the cross-encoder reject (hard negatives) instead of the ' +
          'accepted ones. Needs a filter or rerank.',
      ),
    exactMax: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'Groups and windows up to this many members are searched exactly over the kept embeddings; larger ' +
          'ones through the index with an id selector (default 50000; BENCHMARKS.md).',
      ),
    cluster: z
      .boolean()
      .default(false)
      .describe('Group accepted pairs into multi-reference sets (union-find, as MultiPIT’s NMR set).'),
    batchSize: z
      .number()
      .int()
      .min(1)
      .max(4096)
      .default(DEFAULT_BATCH_SIZE)
      .describe(
        'Query sentences per checkpoint (smaller batches interleave better with queries). A run starts at ' +
          `${FIRST_BATCH} and doubles up to it, so progress shows within seconds.`,
      ),
    since: z
      .union([
        z.strictObject({
          seq: z.number().int().min(0).describe('A write sequence number (`seq` of POST /v1/sentences).'),
        }),
        z.strictObject({
          time: z.iso.datetime({ offset: true }).describe('Sentences written at or after this time.'),
        }),
        z.strictObject({
          id: z
            .number()
            .int()
            .min(0)
            .describe('Sentences with this id and later (a previous job’s `untilId`).'),
        }),
      ])
      .optional()
      .describe(
        lines(
          'Mine only what is new: the pairs with at least one sentence added since this point (each new',
          'sentence against all; the sentences whose top k now holds a new one, against the new ones), with',
          'the same k, filters, domain, withinGroup and window: the pairs a full re-mine finds that involve a',
          'new sentence. Only with scope `all`, without margin or docPairs (new sentences change the',
          'neighbourhood means and the document alignment of old pairs too).',
        ),
      ),
    reverseDepth: z
      .number()
      .int()
      .min(1)
      .max(MAX_REVERSE_DEPTH)
      .optional()
      .describe(
        lines(
          'With `since`: how many neighbours of each new sentence are checked for holding it in their own',
          'top k (default max(10 k, 100)); a sentence farther from every new one than this is not re-queried.',
        ),
      ),
    untilId: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        lines(
          'Sentences with this id or later are not part of the job (set when it is created: the sentences',
          'added after it started; give it as `since: {id}` to the next job so nothing is mined twice or lost).',
        ),
      ),
  })
  .strict()
  .meta({ id: 'JobRequest' });

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

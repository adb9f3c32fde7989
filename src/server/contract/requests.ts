/**
 * What the routes accept: the zod validators the handlers parse with, declared once with the descriptions
 * the OpenAPI document shows (contract/document.ts). Schemas that depend on the service's limits are
 * factories; the document uses the defaults.
 */
import { z } from 'zod';
import { EXPORT_FORMATS, SCHEMES } from '../../annotations/index.js';
import { labelModeSchema, searchOptionsSchema } from '../../search/types.js';
import { MAX_CONTEXT, MAX_REPORTED_IDS } from '../../store/index.js';
import { normalize } from '../../text/index.js';
import type { Limits } from '../context.js';

export { jobSpecSchema as JobRequest } from '../../jobs/spec.js';
export { lexicalFilterSchema as LexicalFilter } from '../../search/lexical.js';

export { MAX_CONTEXT };

/** Sentences of document context on each side (a body's number, or a query string's digits). */
const contextOf = (n: z.ZodNumber, description: string) =>
  n.int().min(0).max(MAX_CONTEXT, `at most ${MAX_CONTEXT}`).describe(description);

/** One factory call per limits object: a schema id (`Text`) may stand for one schema only. */
const memo = <T>(make: (limits: Limits) => T) => {
  const made = new WeakMap<Limits, T>();
  return (limits: Limits): T => {
    const hit = made.get(limits);
    if (hit !== undefined) return hit;
    const fresh = make(limits);
    made.set(limits, fresh);
    return fresh;
  };
};

/** One query sentence (search, classify). */
export const textSchema = memo((limits: Limits) =>
  z
    .string()
    .max(limits.maxTextChars, `at most ${limits.maxTextChars} characters`)
    .refine(
      (s) => normalize(s) !== '',
      'must not be empty (after whitespace and control characters are removed)',
    )
    .meta({
      id: 'Text',
      description: `A sentence; at most ${limits.maxTextChars} characters (UTF-16 code units) and not only whitespace.`,
    }),
);

const contextCount = contextOf(
  z.number(),
  'Give each candidate read from a document the sentences of that document around it (N on each side).',
).optional();

export const searchRequest = memo((limits: Limits) => {
  const text = textSchema(limits);
  return searchOptionsSchema
    .extend({
      context: contextCount,
      text: text.optional(),
      texts: z
        .array(text)
        .min(1)
        .max(limits.maxTexts, `at most ${limits.maxTexts} texts per request`)
        .optional(),
      k: z
        .number()
        .int()
        .min(1)
        .max(limits.maxK, `at most ${limits.maxK}`)
        .default(10)
        .describe('Candidates returned per query.'),
      candidates: z
        .number()
        .int()
        .min(1)
        .max(limits.maxCandidates, `at most ${limits.maxCandidates}`)
        .optional()
        .describe(
          [
            'ANN neighbours fetched per query (and reranked when reranking); raised to `k` when smaller.',
            'Default `k`, or `max(20, k)` when reranking. When reranking, texts × candidates may not exceed',
            `${limits.maxRerankPairs} (400, field \`candidates\`): each pair is one cross-encoder pass.`,
          ].join('\n'),
        ),
    })
    .strict()
    .refine((b) => (b.text === undefined) !== (b.texts === undefined), {
      message: 'give exactly one of "text" or "texts"',
      path: ['text'],
    })
    .meta({ id: 'SearchRequest', description: 'Exactly one of `text` and `texts`.' });
});

export const classifyRequest = memo((limits: Limits) => {
  const text = textSchema(limits);
  const pair = z
    .union([z.tuple([text, text]), z.object({ s1: text, s2: text }).strict()])
    .meta({ id: 'Pair', description: 'Two sentences: `[s1, s2]` or `{"s1": ..., "s2": ...}`.' });
  return z
    .object({
      pairs: z.array(pair).min(1).max(limits.maxPairs, `at most ${limits.maxPairs} pairs per request`),
      labels: z
        .object({ mode: labelModeSchema.optional() })
        .strict()
        .optional()
        .describe('Who labels the pairs (default: the service’s `--labels-mode`, `balanced`).'),
    })
    .strict()
    .meta({ id: 'ClassifyRequest' });
});

/** `true`/`false`/`1`/`0` in a query string. */
const flag = (description: string) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default('false')
    .transform((v) => v === 'true' || v === '1')
    .describe(description);

export const jobIdParams = z.object({
  id: z
    .uuid('must be a job id (UUID)')
    .meta({ description: 'The job’s id (a UUID).', param: { id: 'JobId' } }),
});

export const streamQuery = z
  .object({
    offset: z.coerce
      .number()
      .int()
      .min(0)
      .default(0)
      .meta({ description: 'First sequence number to send.', param: { id: 'StreamOffset' } }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .optional()
      .meta({ description: 'Most lines to send.', param: { id: 'StreamLimit' } }),
    follow: flag('Keep the stream open until the job has finished.').meta({ param: { id: 'StreamFollow' } }),
  })
  .strict();

export const resultsQuery = streamQuery.extend({
  diff: flag('Give each pair `diff`, the word-level diff of its two texts.'),
  context: contextOf(
    z.coerce.number(),
    'Give each side read from a document the sentences around it there (N on each side).',
  ).default(0),
});

export const reviewQuery = z
  .object({
    offset: z.coerce.number().int().min(0).max(10_000).default(0).describe('Pairs of this order to skip.'),
    limit: z.coerce.number().int().min(1).max(1000).default(100).describe('Most pairs to return.'),
    group: z
      .string()
      .min(1)
      .max(64)
      .default('doc')
      .describe('The metadata key whose values count as one document or group, for the tie-break.'),
  })
  .strict();

export const sentenceQuery = z
  .object({
    context: contextOf(
      z.coerce.number(),
      'Sentences of the same document to return on each side (0: none).',
    ).default(0),
  })
  .strict();

export const sentenceIdParams = z.object({
  id: z
    .string()
    .min(1)
    .max(500)
    .meta({
      description:
        'The index id (digits: the same in the index and the store, dense from 0), or the id the user gave: ' +
        "a record's `id` (jsonl key or CSV column) or a write's client id (POST /v1/sentences `id`). An id " +
        'that names several sentences is a 409.',
      example: '5',
    }),
});

/** Most sentences one write may add. */
export const MAX_ADD = 1000;

export const addSentencesRequest = z
  .object({
    sentences: z
      .array(
        z
          .object({
            text: z
              .string()
              .min(1, 'must not be empty')
              .max(10_000, 'at most 10000 characters')
              .regex(/[\p{L}\p{N}]/u, 'must have a letter or a digit (punctuation alone is no sentence)'),
            meta: z.record(z.string(), z.unknown()).optional().describe('Metadata kept with the sentence.'),
            id: z
              .string()
              .min(1)
              .max(200)
              .optional()
              .describe(
                'Your id for the sentence: a write retried with the same id adds nothing twice (the answer names the sentence added the first time).',
              ),
            replaces: z
              .int()
              .min(0)
              .optional()
              .describe(
                'The id of a live sentence this one replaces: it is deleted in the same durable write (replace = delete + add).',
              ),
          })
          .strict(),
      )
      .min(1)
      .max(MAX_ADD, `at most ${MAX_ADD} sentences a write`),
  })
  .strict();

const metaValue = z.union([z.string(), z.number(), z.boolean()]);

/** POST /v1/sentences/delete: ids, or every sentence whose metadata matches. */
export const deleteSentencesRequest = z
  .object({
    ids: z.array(z.int().min(0)).min(1).max(MAX_REPORTED_IDS).optional().describe('Sentence ids.'),
    where: z
      .record(z.string(), z.union([metaValue, z.array(metaValue).min(1)]))
      .refine((w) => Object.keys(w).length > 0, 'name at least one metadata key')
      .optional()
      .describe(
        'Every live sentence whose metadata has each key equal to its value (or to one of the values listed), e.g. {"source": "feed-7"}.',
      ),
  })
  .strict()
  .refine((o) => (o.ids === undefined) !== (o.where === undefined), {
    message: 'give ids or where (one of them)',
    path: ['ids'],
  });

// --- annotations ----------------------------------------------------------------------------------------

const MAX_ANNOTATED_TEXT = 4000;
const annotatedText = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_ANNOTATED_TEXT, `at most ${MAX_ANNOTATED_TEXT} characters`);
const sentenceId = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const annotatorName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[\p{L}\p{N} ._@-]+$/u, 'letters, digits, space and . _ @ - only');
const decision = z.enum(['accept', 'reject', 'label']);

export const AnnotationSource = z
  .object({
    kind: z.enum(['search', 'job']),
    job: z.uuid().optional(),
    seq: z.number().int().min(0).optional(),
  })
  .strict()
  .meta({ id: 'AnnotationSource', description: 'Where the pair was judged: a search or a job’s result.' });

const seenSide = z
  .object({
    before: z.array(annotatedText).max(MAX_CONTEXT),
    after: z.array(annotatedText).max(MAX_CONTEXT),
  })
  .strict();

export const AnnotationContext = z
  .object({ s1: seenSide.optional(), s2: seenSide.optional() })
  .strict()
  .meta({
    id: 'AnnotationContext',
    description:
      'The document context the annotator saw around each side, kept with the label: Turku labels a pair 3 when it is a paraphrase in this context only (4: in any context).',
  });

export const annotationRequest = z
  .object({
    s1: annotatedText,
    s2: annotatedText,
    s1_id: sentenceId.nullable().optional(),
    s2_id: sentenceId.nullable().optional(),
    scheme: z.enum(SCHEMES),
    decision,
    label: z
      .string()
      .min(1)
      .max(16)
      .optional()
      .describe('Required with `decision: label`: a label of the scheme.'),
    annotator: annotatorName
      .optional()
      .describe('Who labels, when the service has no API keys (ignored when it has).'),
    predicted: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('The cross-encoder’s label when the pair was judged.'),
    probabilities: z.record(z.string().max(64), z.number().min(0).max(1)).optional(),
    model: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        'The model that labeled the pair when it was judged (a result’s `labeledBy`): `probabilities` are on its scale.',
      ),
    mode: labelModeSchema.optional().describe('The labels mode the pair was shown under.'),
    cosine: z.number().min(-1.001).max(1.001).optional(),
    annRank: z.number().int().min(1).optional(),
    rerankRank: z.number().int().min(1).optional(),
    source: AnnotationSource.optional(),
    context: AnnotationContext.optional(),
  })
  .strict()
  .meta({ id: 'AnnotationRequest' });

export const annotationExportQuery = z
  .object({
    format: z.enum(EXPORT_FORMATS).default('jsonl'),
    annotator: annotatorName.optional(),
    scheme: z.enum(SCHEMES).optional(),
    decision: decision.optional(),
    since: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('Only records written at or after this time.'),
  })
  .strict();

export const annotationSummaryQuery = z
  .object({
    scheme: z.enum(SCHEMES).optional(),
    annotator: annotatorName.optional(),
    recent: z.coerce
      .number()
      .int()
      .min(0)
      .max(200)
      .default(20)
      .describe('How many of the newest records to include.'),
  })
  .strict();

export const annotationReportQuery = z
  .object({
    scheme: z.enum(SCHEMES).optional(),
    since: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('Only records written at or after this ISO time.'),
  })
  .strict();

export const annotationLookupRequest = z
  .object({
    pairs: z.array(z.object({ s1: annotatedText, s2: annotatedText }).strict()).max(500, 'at most 500 pairs'),
    annotator: annotatorName.optional().describe('Whose records, when the service has no keys.'),
  })
  .strict();

export const annotationIdParams = z.object({
  id: z.string().regex(/^[0-9a-f]{32}$/, 'must be an annotation id'),
});

// --- the web page's files ---------------------------------------------------------------------------------

export const assetParams = z.object({
  file: z.string().regex(/^[\w-]+\.(?:js|css|svg)$/, 'must be a file name like app.js'),
});

export const vendorParams = z.object({
  file: z.string().describe('A vendored ES module the page imports (`preact.mjs`, `hooks.mjs`, `htm.mjs`).'),
});

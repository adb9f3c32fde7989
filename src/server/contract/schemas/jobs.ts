/** Response bodies of the mining job routes (a job, its streamed pairs and clusters) and of GET /v1/domains. */
import { z } from 'zod';
import { DocumentContext, LexicalMeasures, Meta, PairDiff, Probabilities, SERVED_LABEL } from './search.js';

export const Job = z
  .strictObject({
    id: z.uuid(),
    spec: z.record(z.string(), z.unknown()).describe('The request with its defaults filled in.'),
    index: z.strictObject({
      name: z.string(),
      identity: z.string(),
    }),
    state: z.enum(['queued', 'running', 'done', 'failed', 'cancelled']),
    createdAt: z.iso.datetime({ offset: true }),
    startedAt: z.iso.datetime({ offset: true }).optional(),
    finishedAt: z.iso.datetime({ offset: true }).optional(),
    total: z.int().min(0).describe('Query sentences in scope.'),
    processed: z.int().min(0),
    pairs: z.int().min(0),
    clusters: z.int().min(0).optional(),
    runMs: z.number().min(0).describe('Running time summed over restarts.'),
    rate: z.number().nullable().describe('Query sentences per second of running time.'),
    etaSeconds: z.number().nullable(),
    stage: z
      .strictObject({
        name: z.string().describe('e.g. `align: search` (aligning the documents of a document-pairs scope).'),
        done: z.int().min(0),
        total: z.int().min(0),
      })
      .optional()
      .describe(
        'A stage that runs before mining, while it runs (`processed` counts mining only): its name and progress.',
      ),
    error: z
      .strictObject({
        code: z.string(),
        message: z.string(),
      })
      .optional(),
  })
  .meta({ id: 'Job' });

export const PairSide = z
  .strictObject({
    id: z.int().nullable().describe('Sentence id in the index; null for a query sentence that is not in it.'),
    text: z.string(),
    meta: Meta.optional(),
    context: DocumentContext.optional(),
  })
  .meta({ id: 'PairSide' });

export const DomainSide = z
  .strictObject({
    sigma: z.number(),
    weight: z.number(),
  })
  .meta({ id: 'DomainSide' });

export const MinedPair = z
  .strictObject({
    seq: z.int().min(0),
    a: PairSide,
    b: PairSide,
    cosine: z.number(),
    margin: z.number().optional(),
    label: z.string().describe(SERVED_LABEL).optional(),
    probabilities: Probabilities.optional(),
    labeledBy: z.string().describe('The model that labeled the pair (`rerank.mode`).').optional(),
    lexical: LexicalMeasures,
    diff: PairDiff.optional(),
    span: z
      .strictObject({
        side: z.enum(['a', 'b']),
        start: z.int().min(0),
        end: z.int().min(0),
        cosine: z.number(),
        method: z.enum(['best-clause', 'span']),
        score: z
          .number()
          .describe("Span method only - the model's span score (start + end logit) over its no-span score.")
          .optional(),
      })
      .describe(
        'A sub-sentence pair - the part of side `side` (character offsets [start, end) into its text) that paraphrases the other side, and its cosine to it.',
      )
      .optional(),
    bertScore: z.number().optional(),
    domain: z
      .strictObject({
        a: DomainSide,
        b: DomainSide,
        score: z.number().optional(),
      })
      .describe("With a domain - both sides' σ and weight (a = the query side) and the pair's score.")
      .optional(),
  })
  .meta({ id: 'MinedPair' });

export const Cluster = z
  .strictObject({
    seq: z.int().min(0),
    ids: z.array(z.int().min(0)).min(2),
  })
  .meta({ id: 'Cluster' });

export const DomainList = z
  .strictObject({
    domains: z.array(
      z.strictObject({
        name: z.string(),
        method: z.enum(['ml', 'embedding']),
        unit: z.enum(['bits/token', 'nats']),
        count: z.int().min(0),
        current: z.boolean(),
        changePoint: z.strictObject({
          sigma: z.number(),
          shareBelow: z.number().min(0).max(1),
        }),
        quantiles: z
          .record(z.string(), z.number())
          .describe('min, p01 … p99, max and mean of σ over the index.'),
        combined: z
          .strictObject({
            features: z.array(z.string()),
            weights: z.array(z.number()),
          })
          .nullable()
          .describe(
            "The combined model's features and weights (per standard deviation), or null before a fit.",
          ),
        createdAt: z.iso.datetime({ offset: true }),
      }),
    ),
  })
  .meta({ id: 'DomainList' });

export const ReviewResponse = z
  .strictObject({
    cuts: z.record(z.string(), z.number()).describe('The label cut of each model that labels pairs here.'),
    student: z
      .string()
      .optional()
      .describe('The model that labels every pair in `fast` (the cascade’s student).'),
    pairs: z.array(
      MinedPair.extend({
        margin: z.number().min(0).describe("|P(paraphrase) - the labeling model's cut|: 0 is a coin toss."),
        cut: z.number(),
      }),
    ),
  })
  .meta({ id: 'ReviewResponse' });

/** Response bodies of POST /v1/search and POST /v1/classify. */
import { z } from 'zod';

export const Meta = z
  .record(z.string(), z.unknown())
  .meta({ id: 'Meta', description: "The corpus record's extra fields, as indexed." });

export const Probabilities = z.record(z.string(), z.number().min(0).max(1)).meta({
  id: 'Probabilities',
  description:
    "Every label's probability; they sum to 1. A binary model with a label calibration (config.json's\n" +
    '`paramine.label_calibration`) reports P(paraphrase) calibrated on validation pairs: among pairs given\n' +
    'about p there, about p were paraphrases (its model card has the reliability diagram). The label cut\n' +
    '(`paramine.threshold`) is on this scale.\n',
});

export const LexicalMeasures = z
  .strictObject({
    charNgramCosine: z.number().min(0).describe('Character 2-4-gram TF-IDF cosine (0 to 1).'),
    bleu: z.number().min(0).describe('Mean of sentence BLEU both ways (0 to 100).'),
    plr: z
      .number()
      .min(0)
      .nullable()
      .describe('|len(a) - len(b)| / min(len(a), len(b)) in tokens; null when one side is empty.'),
    lengthRatio: z
      .number()
      .min(1)
      .nullable()
      .describe('max / min length in tokens; null when one side is empty.'),
  })
  .meta({ id: 'LexicalMeasures' });

export const DiffSpan = z
  .strictObject({
    op: z.enum(['equal', 'delete', 'insert', 'move']),
    start: z.int().min(0),
    end: z.int().min(0),
    text: z.string(),
    move: z.int().min(0).describe('For `move`; the span with the same number on the other side.').optional(),
  })
  .meta({ id: 'DiffSpan' });

export const PairDiff = z
  .strictObject({
    a: z.array(DiffSpan),
    b: z.array(DiffSpan),
  })
  .meta({
    id: 'PairDiff',
    description:
      "Word-level diff of two texts `a` (the query, or a pair's first side) and `b`: each side's tokens\n(words, punctuation, CJK characters, emoji; compared case-insensitively) as spans, in order.\n`equal` spans are shared in the same order, `delete` only in `a`, `insert` only in `b`, and `move`\nspans are in both at different places (the same `move` number on both sides). A run of only\nfunction words or punctuation is never a move. Offsets are UTF-16 code units into the texts as\nreturned; whitespace between spans is not covered.\n",
  });

export const CandidateDomain = z
  .strictObject({
    sigma: z.number(),
    weight: z.number(),
    querySigma: z.number(),
    queryWeight: z.number(),
    score: z.number().optional(),
  })
  .meta({
    id: 'CandidateDomain',
    description:
      "Both sides' domain score and weight, and the weighted / combined score that orders the row.",
  });

const Neighbour = z.strictObject({ id: z.int().min(0), text: z.string(), meta: Meta.optional() });

/** A sentence's neighbours in its document (documents read with `paramine index --documents`). */
export const DocumentContext = z
  .strictObject({
    doc: z.string().describe('The document’s id, as the input gave it.'),
    before: z.array(Neighbour).describe('Up to `context` sentences before it, in document order.'),
    after: z.array(Neighbour).describe('Up to `context` sentences after it, in document order.'),
  })
  .meta({
    id: 'DocumentContext',
    description: 'With `context: N`, for a sentence read from a document: its neighbours there.',
  });

/** What `label` means, said once for every response that carries one. */
export const SERVED_LABEL =
  "The served label: the positive label when the labeling model's calibrated P(paraphrase) is at least its " +
  'cut (config.json `paramine.threshold`), else the negative one; the arg-max for a model without a cut. ' +
  'It can differ from the label with the highest probability.';
const LABELED_BY =
  'The model that labeled the pair: the student cross-encoder, or the teacher where the cascade sent it there ' +
  "(`labels.mode`). In `balanced`, an unsure pair the overloaded teacher could not take keeps the student's label.";

export const Candidate = z
  .strictObject({
    id: z.int().min(0),
    text: z.string(),
    cosine: z.number().describe('Cosine similarity to the query (about -1 to 1; for an L2 index, 1 - d/2).'),
    annRank: z.int().min(1).describe('1-based rank among the ANN candidates that passed the filters.'),
    rerankRank: z
      .int()
      .min(1)
      .describe('1-based rank after reranking; present when the cross-encoder ran.')
      .optional(),
    label: z.string().describe(`${SERVED_LABEL} Present when the cross-encoder ran.`).optional(),
    probabilities: Probabilities.optional(),
    labeledBy: z.string().describe(LABELED_BY).optional(),
    lexical: LexicalMeasures,
    bertScore: z
      .number()
      .describe('BERTScore F1 with the query, when filter.bertScoreMin asked for it.')
      .optional(),
    domain: CandidateDomain.optional(),
    meta: Meta.optional(),
    diff: PairDiff.optional(),
    context: DocumentContext.optional(),
  })
  .meta({ id: 'Candidate' });

export const QueryResult = z
  .strictObject({
    query: z.string().describe('The query after normalization.'),
    candidates: z
      .array(Candidate)
      .describe('At most `k`, best first (by paraphrase probability when reranked, else by cosine).'),
    domain: z
      .strictObject({
        sigma: z.number(),
        weight: z.number(),
        kept: z.boolean(),
      })
      .describe("With a domain - the query's σ and weight, and whether subsampling kept it.")
      .optional(),
  })
  .meta({ id: 'QueryResult' });

export const SearchTimings = z
  .strictObject({
    encodeMs: z.number().min(0),
    searchMs: z.number().min(0),
    rerankMs: z.number().min(0),
    totalMs: z.number().min(0),
  })
  .meta({ id: 'SearchTimings' });

export const SearchResponse = z
  .strictObject({
    results: z.array(QueryResult),
    order: z
      .enum(['probability', 'cosine'])
      .describe(
        "With rerank: how candidates are ordered. `probability` (by the cross-encoder's, or the calibrated,\nparaphrase probability); `cosine` when the model's config says reordering by it lowered top-1 on a\nvalidation set (`paramine.rerank_order`): the candidates keep the bi-encoder's order and still\ncarry the model's labels and probabilities.\n",
      )
      .optional(),
    timings: SearchTimings,
  })
  .meta({ id: 'SearchResponse' });

export const PairResult = z
  .strictObject({
    s1: z.string().describe("The pair's first text as sent."),
    s2: z.string().describe("The pair's second text as sent."),
    label: z.string().describe(SERVED_LABEL),
    probabilities: Probabilities,
    model: z.string().describe(LABELED_BY).optional(),
  })
  .meta({ id: 'PairResult' });

export const ClassifyResponse = z
  .strictObject({
    labels: z.array(z.string()).describe("The cross-encoder's labels in class-id order."),
    results: z.array(PairResult),
    timings: z.strictObject({
      rerankMs: z.number().min(0),
    }),
  })
  .meta({ id: 'ClassifyResponse' });

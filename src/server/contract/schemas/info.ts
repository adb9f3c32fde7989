/** Response bodies of the read routes (sentences, the index, health) and of the web page's GET /v1/config. */
import { z } from 'zod';
import { LexicalFilter } from '../requests.js';
import { DocumentContext, Meta } from './search.js';

export const Sentence = z
  .strictObject({
    id: z.int().min(0),
    text: z.string(),
    meta: Meta.optional(),
    context: DocumentContext.optional(),
  })
  .meta({ id: 'Sentence' });

export const FileSha256 = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .meta({
    id: 'FileSha256',
    description:
      "A file's checksum in the manifest (sha256, or sampleSha256 over 64 evenly spaced 64 KiB blocks), checked when the index opens.",
  });

export const OperatingPoint = z
  .strictObject({
    nprobe: z.int().min(1),
    efSearch: z
      .int()
      .min(1)
      .describe('Candidate list of the HNSW coarse quantizer (IVF..._HNSW indexes).')
      .optional(),
    kFactor: z.number().min(1).describe('Candidates re-scored exactly per result.'),
    recall: z
      .number()
      .min(0)
      .max(1)
      .describe('recall@10 against exact search on held-out queries of the collection.'),
    recallStderr: z
      .number()
      .min(0)
      .describe(
        'Standard error of `recall`; a point serves a wanted recall r when recall - 1.645 stderr >= r.',
      )
      .optional(),
    p50Ms: z.number().min(0).describe('Median single-query search time (ms), index only (no encoding).'),
    p99Ms: z.number().min(0),
  })
  .meta({ id: 'OperatingPoint' });

export const Manifest = z
  .strictObject({
    format: z.literal('paramine-index'),
    version: z.literal(1),
    dim: z.int().min(1),
    metric: z.enum(['ip', 'l2']),
    factory: z.string().min(1).describe('FAISS index factory string.'),
    model: z.strictObject({
      id: z.string().min(1),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
    }),
    ntotal: z.int().min(0),
    shards: z
      .array(
        z.strictObject({
          file: z.string().regex(/^shard-\d{3,}\.faiss$/),
          count: z.int().min(0),
          sha256: FileSha256.optional(),
          bytes: z.int().min(0).optional(),
          sampleSha256: FileSha256.optional(),
        }),
      )
      .min(1),
    search: z.strictObject({
      nprobe: z.int().min(1),
      kFactor: z.number().min(1),
      efSearch: z.int().min(1).optional(),
      refine: z.literal('vectors').optional(),
    }),
    operatingPoints: z
      .array(OperatingPoint)
      .describe(
        'Measured search settings (paramine tune), cheapest first; the Pareto front of recall and latency.',
      )
      .optional(),
    tuning: z
      .record(z.string(), z.unknown())
      .describe('How the operating points were measured (queries, k, target recall, threads, time).')
      .optional(),
    vectors: z
      .strictObject({
        file: z.literal('vectors.f16'),
        dtype: z.literal('float16'),
        count: z.int().min(0),
        dim: z.int().min(1),
        sha256: FileSha256.optional(),
        bytes: z.int().min(0).optional(),
        sampleSha256: FileSha256.optional(),
      })
      .describe('The embeddings kept beside the index (mining jobs query with them instead of re-encoding).')
      .optional(),
    build: z
      .record(z.string(), z.unknown())
      .describe('How it was built (factory plan, training sample, corpus counters).'),
    faissVersion: z.string(),
    createdAt: z.iso.datetime({ offset: true }),
  })
  .meta({ id: 'Manifest', description: "The index's manifest.json." });

const QuantizationFit = z
  .strictObject({
    n: z.int().min(0).describe('Vectors measured.'),
    error: z.number().min(0).describe("Mean |exact self-score - the quantized index's self-score|."),
    selfRecall: z.number().min(0).max(1).describe('Share found as their own nearest neighbour.'),
  })
  .meta({ id: 'QuantizationFit' });

export const IndexInfo = z
  .strictObject({
    dir: z.string().describe('The index directory as given to `paramine serve --index`.'),
    manifest: Manifest,
    sentences: z.int().min(0).describe('Sentences in the store as built.'),
    updates: z
      .strictObject({
        added: z
          .int()
          .min(0)
          .describe('Sentences added since the build (POST /v1/sentences), deleted ones included.'),
        deleted: z.int().min(0).describe('Sentences deleted since the build (tombstones until compaction).'),
        seq: z.int().min(0).describe("The next write's sequence number."),
        growing: z.int().min(0).describe('Added sentences in the growing exact segment (not sealed yet).'),
        sealed: z
          .strictObject({ segments: z.int().min(0), sentences: z.int().min(0) })
          .describe(
            "Sealed segments of the build's kind (its trained quantizers, no retraining) and the sentences in them.",
          ),
        drift: z
          .strictObject({
            base: QuantizationFit,
            added: QuantizationFit,
            retrain: z
              .boolean()
              .describe(
                "True when the added sentences fit the build's quantizers clearly worse than its own.",
              ),
            reason: z.string(),
          })
          .nullable()
          .describe(
            "How well the build's trained quantizers fit the sealed sentences against a sample of its own (null until a segment is sealed, or without vectors.f16).",
          ),
      })
      .describe('Writes made while serving.'),
    operatingPoints: z
      .array(OperatingPoint)
      .describe(
        "The index's measured operating points, cheapest first (empty before `paramine tune`): what a\nsearch's or job's `recall` chooses from.\n",
      )
      .optional(),
  })
  .meta({ id: 'IndexInfo' });

export const Health = z
  .strictObject({
    status: z.literal('ok'),
  })
  .meta({ id: 'Health' });

export const Ready = z
  .strictObject({
    ready: z.boolean(),
    checks: z.record(z.string(), z.boolean()).describe('Named readiness checks; all true means ready.'),
  })
  .meta({ id: 'Ready' });

export const AnnotationScheme = z
  .strictObject({
    name: z.enum(['binary', 'turku']),
    accept: z.string().describe('The label `accept` stores.'),
    reject: z.string().describe('The label `reject` stores.'),
    labels: z.array(z.string()),
    positive: z.array(z.string()).describe('Labels counted as paraphrases.'),
  })
  .meta({ id: 'AnnotationScheme' });

export const ClientConfig = z
  .strictObject({
    auth: z.strictObject({
      keys: z.boolean().describe('The service has API keys (writes need one).'),
      protectAll: z.boolean().describe('Reads need a key too.'),
    }),
    reranker: z
      .strictObject({
        labels: z.array(z.string()),
      })
      .nullable(),
    annotation: z.strictObject({
      schemes: z.strictObject({
        binary: AnnotationScheme,
        turku: AnnotationScheme,
      }),
      default: z.enum(['binary', 'turku']),
    }),
    search: z.strictObject({
      defaults: z.strictObject({
        k: z.int(),
        rerank: z.boolean(),
        nprobe: z.int().nullable(),
      }),
      ivf: z.boolean().describe('The index has inverted lists (nprobe and recall apply); false for Flat.'),
      limits: z.record(z.string(), z.int()),
    }),
    jobs: z.strictObject({
      presets: z.record(z.string(), LexicalFilter).describe('The named filter presets and their filters.'),
    }),
  })
  .meta({ id: 'ClientConfig' });

export const AddedSentences = z
  .strictObject({
    sentences: z.array(
      z.strictObject({
        id: z.int().min(0).describe("The sentence's id (for a duplicate: the sentence already there)."),
        status: z
          .enum(['added', 'duplicate', 'retried'])
          .describe(
            'added: new and searchable now; duplicate: the same text (after normalization) is in the index; retried: this client id was added before.',
          ),
        clientId: z.string().optional(),
      }),
    ),
    seq: z.int().min(0).describe("The write's sequence number (`mine --since` takes one)."),
  })
  .meta({ id: 'AddedSentences' });

export const DeletedSentences = z
  .strictObject({
    deleted: z.int().min(0).describe('Sentences deleted by this write (those deleted before not counted).'),
    ids: z.array(z.int().min(0)).describe('Their ids (at most the first 10,000).'),
    missing: z.array(z.int().min(0)).optional().describe('Ids asked for that name no sentence.'),
    seq: z.int().min(0).describe("The next write's sequence number."),
  })
  .meta({ id: 'DeletedSentences' });

export const DeletedSentence = z
  .strictObject({ id: z.int().min(0), deleted: z.boolean().describe('false: it was deleted before.') })
  .meta({ id: 'DeletedSentence' });

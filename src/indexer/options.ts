/** Build options of `paramine index`, validated once at the boundary. */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { cli } from '../config.js';
import { CORPUS_FORMATS, DEFAULT_SEGMENT_MINUTES } from '../corpus/index.js';
import { DEFAULT_SEED, DEFAULT_TARGET_RECALL, DEFAULT_TUNE_QUERIES } from '../index/index.js';
import { DEFAULT_ENCODER } from '../models/catalog.js';
import { groupKeySpecSchema, parseGroupKeySpec } from '../store/index.js';

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** "2GB", "512MiB", "1.5 GB" or a plain byte count; undefined when it is not one. */
export function parseBytes(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b|b)?\s*$/i.exec(text);
  if (!m) return undefined;
  const unit = UNITS[(m[2] ?? '').toLowerCase()];
  return unit === undefined ? undefined : Math.round(Number(m[1]) * unit);
}

/** A byte size given as a number or a string with a unit. */
const bytes = z.union([z.number(), z.string()]).transform((input, ctx) => {
  const v = typeof input === 'number' ? input : parseBytes(input);
  if (v === undefined || !Number.isSafeInteger(v) || v <= 0) {
    ctx.addIssue({ code: 'custom', message: `"${input}" is not a size (e.g. 2GB, 512MiB)` });
    return z.NEVER;
  }
  return v;
});

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);
const list = (v: string) => v.split(',').filter((k) => k !== '');

/**
 * Every option of the offline build, declared once: the programmatic callers' validation, and through
 * `cli` the flags of `paramine index` (type, default and choices read from here; src/config.ts).
 */
export const buildOptionsSchema = z.object({
  inputs: z
    .array(z.string().min(1), { error: 'give at least one --input file' })
    .min(1, 'give at least one --input file')
    .register(cli, {
      flag: '--input <files...>',
      description: 'corpus files: .txt, .jsonl, .tsv/.csv with a text column; .gz too',
    }),
  format: z.enum(CORPUS_FORMATS).optional().register(cli, {
    flag: '--format <format>',
    description: "every input's format, where its extension does not say it (ParaSCI's .src/.tgt: txt)",
  }),
  documents: z.boolean().default(false).register(cli, {
    flag: '--documents',
    description:
      'records are documents, split into sentences that keep their document id, position and offsets (.txt: blank-line separated; .jsonl: one a line with text + doc; .srt: always)',
  }),
  lang: z.string().min(2).max(35).default('en').register(cli, {
    flag: '--lang <tag>',
    description: "the documents' language for sentence splitting (BCP 47), where a record gives none",
  }),
  segmentMinutes: int(0, 24 * 60)
    .default(DEFAULT_SEGMENT_MINUTES)
    .register(cli, {
      flag: '--segment-minutes <n>',
      description:
        'subtitles (.srt) are cut by cue time into documents of this many minutes, FILE:N with subtitle and segment metadata (0: one document a file)',
    }),
  out: z
    .string({ error: 'give the index directory to create with --out' })
    .min(1)
    .register(cli, { flag: '--out <dir>', description: 'index directory to create (e.g. indexes/NAME)' }),
  model: z
    .string()
    .min(1)
    .default(DEFAULT_ENCODER)
    .register(cli, { flag: '--model <name|dir>', description: 'sentence encoder' }),
  factory: z.string().min(1).default('auto').register(cli, {
    flag: '--factory <str>',
    description:
      'FAISS factory string, or auto (Flat up to 100k; IVF-PQ above, with an HNSW coarse quantizer from 10^6)',
  }),
  shards: int(1, 1024).default(1).register(cli, {
    flag: '--shards <n>',
    description: 'least number of shards (more when one would exceed --shard-memory)',
  }),
  metric: z.enum(['ip', 'l2']).default('ip').register(cli, {
    flag: '--metric <ip|l2>',
    description: 'inner product (cosine on unit vectors) or L2',
  }),
  resume: z
    .boolean()
    .default(false)
    .register(cli, { flag: '--resume', description: 'continue an interrupted build in --out' }),
  // Length filters in tokens (src/text tokenizer), applied after normalization.
  minTokens: int(0)
    .default(1)
    .register(cli, { flag: '--min-tokens <n>', description: 'drop sentences with fewer tokens' }),
  maxTokens: int(1)
    .default(128)
    .register(cli, { flag: '--max-tokens <n>', description: 'drop sentences with more tokens' }),
  // A cheap guard on junk, before tokenizing.
  maxChars: int(1).default(5000).register(cli, {
    flag: '--max-chars <n>',
    description: 'drop lines longer than this before tokenizing',
  }),
  onBadRecord: z.enum(['fail', 'skip']).default('fail').register(cli, {
    flag: '--on-bad-record <fail|skip>',
    description: 'an invalid JSON line or table row: stop, or skip and report it',
  }),
  checkpointEvery: int(1).default(8192).register(cli, {
    flag: '--checkpoint-every <n>',
    description: 'sentences per checkpoint (work redone at most after a crash)',
  }),
  // The encoder sorts them by length inside.
  encodeBatch: int(1, 65536)
    .default(256)
    .register(cli, { flag: '--encode-batch <n>', description: 'texts per encoder call' }),
  keepEmbeddings: z.boolean().default(false).register(cli, {
    flag: '--keep-embeddings',
    description: 'keep the spilled half-float embeddings (work/) after the build',
  }),
  // Mining jobs query with the kept vectors.
  vectors: z.enum(['f16', 'none']).default('f16').register(cli, {
    flag: '--vectors <f16|none>',
    description:
      'keep every embedding in the index as half floats (vectors.f16, 2 x dim bytes a sentence), or not',
  }),
  // 'vectors' when kept: src/index/factory.ts.
  refine: z.enum(['auto', 'none', 'sq8', 'flat', 'vectors']).default('auto').register(cli, {
    flag: '--refine <kind>',
    description: 'auto | vectors (exact, from vectors.f16) | sq8 | flat | none',
  }),
  seed: z
    .number()
    .int()
    .default(DEFAULT_SEED)
    .register(cli, { flag: '--seed <n>', description: 'seed of the training sample' }),
  // Written at the end of the build, in one pass over the store (src/store/groups.ts).
  groupKeys: z
    .array(groupKeySpecSchema)
    .default([])
    .register(cli, {
      flag: '--group-keys <keys>',
      description:
        'group tables to write at the end (comma-separated; KEY:date for windows; `term` tags definitions)',
      parse: (v) => list(v).map(parseGroupKeySpec),
    }),
  // FAISS asks 30..256.
  trainPointsPerList: int(1, 4096).default(40).register(cli, {
    flag: '--train-points-per-list <n>',
    description: 'training vectors per IVF list',
  }),
  // k-means time.
  trainSample: int(1).optional().register(cli, {
    flag: '--train-sample <n>',
    description: 'most training vectors (default: points per list x lists)',
  }),
  // A k-means group, a batch.
  trainMemory: bytes.prefault('1GiB').register(cli, {
    flag: '--train-memory <size>',
    description: 'vectors training holds at once, e.g. 1GB',
  }),
  // Codes + ids; inverted lists grow by doubling.
  shardMemory: bytes.prefault('2GiB').register(cli, {
    flag: '--shard-memory <size>',
    description: "one shard's working set while filled, e.g. 2GB",
  }),
  // Codes, ids, coarse quantizer, in-RAM refine codes (memory-mapped vectors.f16 aside). A build that cannot
  // fit is refused before any work (OVER_BUDGET, naming the budget that would do).
  maxRam: bytes.optional().register(cli, {
    flag: '--max-ram <size>',
    description:
      'RAM the served index may hold, e.g. 16GB: auto picks what fits, else refused before any work',
  }),
  // src/index/tune.ts
  tune: z.boolean().default(true).register(cli, {
    flag: '--no-tune',
    description: 'skip measuring operating points after the build (Flat indexes never tune)',
  }),
  targetRecall: z.number().gt(0).max(1).default(DEFAULT_TARGET_RECALL).register(cli, {
    flag: '--target-recall <r>',
    description: 'search defaults: the cheapest operating point reaching this recall@10',
  }),
  tuneQueries: int(10, 100_000).default(DEFAULT_TUNE_QUERIES).register(cli, {
    flag: '--tune-queries <n>',
    description: 'held-out queries drawn from the collection for the tuning',
  }),
  fillJobs: int(1, 64)
    .default(1)
    .register(cli, { flag: '--fill-jobs <n>', description: 'shards filled at once' }),
  // OpenMP; OpenBLAS too while training.
  threads: int(1, 1024)
    .default(() => availableParallelism())
    .register(cli, {
      flag: '--threads <n>',
      description: 'FAISS threads for training and filling (default: all cores)',
    }),
  // No encoding; a sample is re-encoded to check alignment and model.
  embeddings: z.array(z.string().min(1)).optional().register(cli, {
    flag: '--embeddings <files...>',
    description:
      'embeddings computed elsewhere: one .npy per --input file, row r-1 = record r (docs/embeddings.md)',
  }),
  embeddingsCheck: int(1, 1024).default(4).register(cli, {
    flag: '--embeddings-check <n>',
    description: 'sentences re-encoded per checkpoint to check --embeddings',
  }),
  quiet: z.boolean().default(false).register(cli, { flag: '--quiet', description: 'no progress output' }),
});

export type BuildOptionsInput = z.input<typeof buildOptionsSchema>;
export type BuildOptions = z.output<typeof buildOptionsSchema>;

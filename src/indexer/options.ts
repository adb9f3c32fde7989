/** Build options of `paramine index`, validated once at the boundary. */
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { CORPUS_FORMATS } from '../corpus/index.js';
import { groupKeySpecSchema } from '../store/index.js';

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

export const buildOptionsSchema = z.object({
  inputs: z.array(z.string().min(1)).min(1, 'give at least one --input file'),
  /** Every input's format where the extension does not say it (e.g. ParaSCI's .src/.tgt: txt). */
  format: z.enum(CORPUS_FORMATS).optional(),
  out: z.string().min(1),
  model: z.string().min(1),
  factory: z.string().min(1).default('auto'),
  /** Least shard count; more when one shard would exceed shardMemory. */
  shards: z.number().int().min(1).max(1024).default(1),
  metric: z.enum(['ip', 'l2']).default('ip'),
  resume: z.boolean().default(false),
  /** Length filters in tokens (src/text tokenizer), applied after normalization. */
  minTokens: z.number().int().min(0).default(1),
  maxTokens: z.number().int().min(1).default(128),
  /** Lines longer than this many characters are dropped before tokenizing (cheap guard on junk). */
  maxChars: z.number().int().min(1).default(5000),
  onBadRecord: z.enum(['fail', 'skip']).default('fail'),
  /** Sentences per checkpoint: at most this much encoding is redone after a crash. */
  checkpointEvery: z.number().int().min(1).default(8192),
  /** Texts handed to the encoder at once (it sorts them by length inside). */
  encodeBatch: z.number().int().min(1).max(65536).default(256),
  keepEmbeddings: z.boolean().default(false),
  /** Keep every embedding in the index as vectors.f16 (mining jobs query with them), or not. */
  vectors: z.enum(['f16', 'none']).default('f16'),
  /** Refine stage: auto ('vectors' when kept, see src/index/factory.ts), or one of them. */
  refine: z.enum(['auto', 'none', 'sq8', 'flat', 'vectors']).default('auto'),
  seed: z.number().int().default(1234),
  /** Group tables (src/store/groups.ts) written at the end of the build, in one pass over the store. */
  groupKeys: z.array(groupKeySpecSchema).default([]),
  /** Training points per IVF list (FAISS asks 30..256). */
  trainPointsPerList: z.number().int().min(1).max(4096).default(40),
  /** Most training vectors (k-means time); default: points per list x lists. */
  trainSample: z.number().int().min(1).optional(),
  /** Float32 vectors training holds at once (a k-means group, a batch). */
  trainMemory: bytes.default(2 ** 30),
  /** One shard's working set while it is filled (codes + ids, inverted lists grow by doubling). */
  shardMemory: bytes.default(2 * 2 ** 30),
  /**
   * RAM the served index may hold (codes, ids, coarse quantizer, in-RAM refine codes; memory-mapped
   * vectors.f16 aside): auto picks the best plan under it, a given factory is checked against it, and a
   * build that cannot fit is refused before any work (OVER_BUDGET, naming the budget that would do).
   */
  maxRam: bytes.optional(),
  /** Measure operating points and set the search defaults after the build (src/index/tune.ts). */
  tune: z.boolean().default(true),
  /** Search defaults: the cheapest operating point reaching this recall@10. */
  targetRecall: z.number().gt(0).max(1).default(0.95),
  /** Held-out queries the tuning draws from the collection. */
  tuneQueries: z.number().int().min(10).max(100_000).default(1000),
  /** Shards filled at once. */
  fillJobs: z.number().int().min(1).max(64).default(1),
  /** FAISS threads for training and filling (OpenMP; OpenBLAS too while training). */
  threads: z
    .number()
    .int()
    .min(1)
    .max(1024)
    .default(() => availableParallelism()),
  /**
   * Embeddings computed elsewhere: one .npy per input file, same order, row r - 1 = record r
   * (docs/embeddings.md). No encoding; a sample is re-encoded to check alignment and model.
   */
  embeddings: z.array(z.string().min(1)).optional(),
  /** Sentences re-encoded per checkpoint to check --embeddings (more in the first). */
  embeddingsCheck: z.number().int().min(1).max(1024).default(4),
  quiet: z.boolean().default(false),
});

export type BuildOptionsInput = z.input<typeof buildOptionsSchema>;
export type BuildOptions = z.output<typeof buildOptionsSchema>;

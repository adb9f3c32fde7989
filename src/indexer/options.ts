/** Build options of `paramine index`, validated once at the boundary. */
import { z } from 'zod';
import { groupKeySpecSchema } from '../store/index.js';

export const buildOptionsSchema = z.object({
  inputs: z.array(z.string().min(1)).min(1, 'give at least one --input file'),
  out: z.string().min(1),
  model: z.string().min(1),
  factory: z.string().min(1).default('auto'),
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
  seed: z.number().int().default(1234),
  /** Group tables (src/store/groups.ts) written at the end of the build, in one pass over the store. */
  groupKeys: z.array(groupKeySpecSchema).default([]),
  quiet: z.boolean().default(false),
});

export type BuildOptionsInput = z.input<typeof buildOptionsSchema>;
export type BuildOptions = z.output<typeof buildOptionsSchema>;

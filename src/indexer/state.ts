/** The build's progress record, stored in LMDB in the same transaction as the sentences it covers. */
import { z } from 'zod';

export const countersSchema = z.object({
  read: z.number().int(),
  kept: z.number().int(),
  duplicates: z.number().int(),
  empty: z.number().int(),
  short: z.number().int(),
  long: z.number().int(),
  bad: z.number().int(),
});
export type Counters = z.infer<typeof countersSchema>;

export const buildStateSchema = z.object({
  formatVersion: z.literal(1),
  phase: z.enum(['ingest', 'index', 'done']),
  inputs: z.array(z.object({ path: z.string(), size: z.number() })),
  model: z.object({ id: z.string(), sha256: z.string(), dim: z.number().int() }),
  /** Options that change the content; a resume must use the same. */
  contentOptions: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  cursor: z.object({ fileIndex: z.number().int(), record: z.number().int() }),
  nextId: z.number().int(),
  chunks: z.number().int(),
  counters: countersSchema,
  /** Wall time spent in earlier runs of this build, so the summary reports the whole build. */
  elapsedMs: z.number(),
  /** Phase 2's progress, so a resumed build keeps what is done (absent before phase 2 starts). */
  index: z
    .object({
      /** work/vectors.f16 holds every spilled vector. */
      assembled: z.boolean(),
      /** The factory of the trained, empty index in work/trained.faiss. */
      trained: z.string().optional(),
      trainMs: z.number().default(0),
      /** Shard count and the shards whose files are written. */
      shards: z.number().int().optional(),
      done: z.array(z.number().int()).default([]),
      fillMs: z.number().default(0),
    })
    .optional(),
});
export type BuildState = z.infer<typeof buildStateSchema>;

export const STATE_KEY = 'build';

export function emptyCounters(): Counters {
  return { read: 0, kept: 0, duplicates: 0, empty: 0, short: 0, long: 0, bad: 0 };
}

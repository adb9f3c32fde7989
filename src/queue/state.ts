/**
 * The coordinator's record of a distributed build, DIR/build.json: what every worker needs to run a job
 * of it (inputs, options, model, the chunk table) and how far the coordinator got. Written durably
 * (temporary name + rename) at each phase change; a restarted coordinator resumes from it.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomicSync } from '../durable.js';
import { ParamineError } from '../errors.js';
import { countersSchema } from '../indexer/state.js';
import { layout } from './layout.js';

export const chunkSpecSchema = z.union([
  /** Lines [start, end) of a plain .txt/.jsonl file, `before` lines ahead of it. */
  z.object({
    fileIndex: z.number().int().min(0),
    start: z.number().int().min(0),
    end: z.number().int().min(0),
    before: z.number().int().min(0),
  }),
  /** A whole file (compressed or a table): read from its start. */
  z.object({ fileIndex: z.number().int().min(0), whole: z.literal(true) }),
]);
export type ChunkSpec = z.infer<typeof chunkSpecSchema>;

export const PHASES = ['embed', 'dedup', 'assemble', 'train', 'fill', 'merge', 'done'] as const;

export const queueBuildSchema = z.object({
  formatVersion: z.literal(1),
  /** Names this build's jobs in the queue (several builds may share one). */
  id: z.string().regex(/^[a-z0-9]+$/),
  out: z.string(),
  inputs: z.array(z.object({ path: z.string(), size: z.number() })),
  /** The build options (src/indexer/options.ts), as parsed by the coordinator. */
  options: z.record(z.string(), z.unknown()),
  model: z.object({ id: z.string(), sha256: z.string(), dim: z.number().int() }),
  chunks: z.array(chunkSpecSchema),
  /** Dedup partitions of the 256 first-byte buckets of the key hashes. */
  partitions: z.number().int().min(1).max(256),
  phase: z.enum(PHASES),
  /** Chunks given up after their retries (with --on-failed-chunk skip). */
  skipped: z.array(z.number().int()).default([]),
  /** Set once assembled: kept vectors and the corpus counters. */
  vectors: z.number().int().optional(),
  counters: countersSchema.optional(),
  /** Set once trained: the factory, shard count and each fill job's range. */
  factory: z.string().optional(),
  trainMs: z.number().default(0),
  pieces: z
    .array(
      z.object({
        shard: z.number().int(),
        piece: z.number().int(),
        first: z.number().int(),
        count: z.number().int(),
      }),
    )
    .optional(),
  shards: z.number().int().optional(),
  fillMs: z.number().default(0),
  elapsedMs: z.number().default(0),
});
export type QueueBuild = z.infer<typeof queueBuildSchema>;

export function readBuild(dir: string): QueueBuild | undefined {
  let text: string;
  try {
    text = readFileSync(layout.state(dir), 'utf8');
  } catch {
    return undefined;
  }
  const r = queueBuildSchema.safeParse(JSON.parse(text));
  if (!r.success) {
    throw new ParamineError(
      'BAD_FILE',
      `${layout.state(dir)} is not a distributed build state: ${r.error.message}`,
    );
  }
  return r.data;
}

export function saveBuild(dir: string, b: QueueBuild): void {
  writeFileAtomicSync(layout.state(dir), Buffer.from(JSON.stringify(b, null, 1)));
}

/** A chunk for messages: "chunk 7 (corpus.jsonl bytes 1048576..2097152, lines 8193..)". */
export function chunkName(b: QueueBuild, c: number): string {
  const spec = b.chunks[c];
  if (!spec) return `chunk ${c}`;
  const path = b.inputs[spec.fileIndex]?.path ?? `input ${spec.fileIndex}`;
  return 'whole' in spec
    ? `chunk ${c} (${path}, whole file)`
    : `chunk ${c} (${path} bytes ${spec.start}..${spec.end}, lines ${spec.before + 1}..)`;
}

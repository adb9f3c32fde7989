/**
 * Options of the distributed build, declared once: the coordinator validates with this schema and
 * `paramine index --queue` takes its flags from it (src/config.ts). No BullMQ here: the one-machine build
 * registers these flags without loading it.
 */
import { z } from 'zod';
import { cli } from '../config.js';
import { STAGES } from './connection.js';

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);
const note = 'distributed build: ';

export const queueOptionsSchema = z.object({
  queue: z
    .string()
    .min(1)
    .register(cli, {
      flag: '--queue <url>',
      description: `${note}redis://HOST:PORT/DB of the job queue (docs/distributed.md)`,
    }),
  work: z
    .string()
    .min(1)
    .register(cli, {
      flag: '--work <dir>',
      description: `${note}work directory shared by every worker (NFS-style path)`,
    }),
  chunkLines: int(1)
    .default(8192)
    .register(cli, {
      flag: '--chunk-lines <n>',
      description: `${note}input lines per embed job`,
    }),
  partitions: int(1, 256)
    .default(16)
    .register(cli, {
      flag: '--partitions <n>',
      description: `${note}dedup jobs (key-hash partitions)`,
    }),
  // Pieces of a shard.
  pieceSize: int(1)
    .default(1_000_000)
    .register(cli, {
      flag: '--piece-size <n>',
      description: `${note}vectors per fill job`,
    }),
  onFailedChunk: z
    .enum(['stop', 'skip'])
    .default('stop')
    .register(cli, {
      flag: '--on-failed-chunk <stop|skip>',
      description: `${note}a chunk failing after its retries`,
    }),
  metricsPort: int(0, 65535)
    .optional()
    .register(cli, {
      flag: '--metrics-port <port>',
      description: `${note}serve Prometheus metrics on this port`,
    }),
  pollMs: int(10).default(250),
});
export type QueueOptionsInput = z.input<typeof queueOptionsSchema>;

/** Query sentences per range job of distributed mining (`--range-size`). */
export const DEFAULT_RANGE_SIZE = 20_000;

/** Documents per share of a distributed document alignment (`docs align --share-size`): 8 search batches. */
export const DEFAULT_SHARE_SIZE = 131_072;

/** Options of `paramine worker`, declared once with their flags. */
export const workerOptionsSchema = z.object({
  queue: z
    .string()
    .min(1)
    .register(cli, { flag: '--queue <url>', description: 'redis://HOST:PORT/DB of the job queue' }),
  concurrency: int(1, 64).default(1).register(cli, {
    flag: '--concurrency <n>',
    description: 'jobs of each stage run at once',
  }),
  threads: int(1, 1024).default(1).register(cli, {
    flag: '--threads <n>',
    description: 'encoder (ONNX Runtime) and FAISS threads',
  }),
  stages: z
    .array(z.enum(STAGES))
    .min(1)
    .default([...STAGES])
    .register(cli, {
      flag: '--stages <list>',
      description: 'comma-separated stages to run',
      parse: (v) => v.split(','),
    }),
  metricsPort: int(0, 65535).optional().register(cli, {
    flag: '--metrics-port <port>',
    description: 'serve Prometheus metrics on this port',
  }),
  // BullMQ's lock duration and stalled-job check interval: how soon a dead worker's job moves on.
  lockMs: int(500).default(30_000).register(cli, {
    flag: '--lock-ms <ms>',
    description: "a job's lock: a dead worker's job moves on this long after it died",
  }),
  stalledMs: int(200).default(15_000).register(cli, {
    flag: '--stalled-ms <ms>',
    description: 'how often to look for jobs of dead workers',
  }),
});
export type WorkerOptionsInput = z.input<typeof workerOptionsSchema>;

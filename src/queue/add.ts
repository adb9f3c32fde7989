/**
 * Adds through the queue (issue #30, past one machine). `paramine serve --write-queue URL` does not embed
 * the sentences of a write (POST /v1/sentences) itself: it sends their texts to the `add` queue, where a
 * `paramine worker` embeds them with the index's model (checked by sha256) and answers with the vectors;
 * the service then writes them durably and seals them as before. A heavy feed thus spends the workers'
 * cores, not the ones answering searches. The answer to the write still comes only once it is on disk; a
 * write no worker took within the timeout is refused (503), nothing of it written.
 */
import { type Job, Queue, QueueEvents } from 'bullmq';
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import type { Embedder } from '../models/ports.js';
import { connectionOptions, parseQueueUrl, queueName, type RedisTarget } from './connection.js';

/** How long a write waits for a worker's vectors by default. */
export const ADD_TIMEOUT_MS = 60_000;

const modelRef = z.object({ id: z.string().min(1), sha256: z.string().regex(/^[0-9a-f]{64}$/) });
export const addJobData = z.object({ model: modelRef, texts: z.array(z.string()).min(1) });
export type AddJobData = z.infer<typeof addJobData>;
const addJobResult = z.object({ dim: z.number().int().positive(), vectors: z.string() });
export type AddJobResult = z.infer<typeof addJobResult>;

/** A worker's side: the texts' vectors, as the service reads them back (base64 of little-endian float32). */
export async function runAddJob(
  data: unknown,
  encoderFor: (
    model: AddJobData['model'],
  ) => Promise<{ dim: number; encode(texts: string[]): Promise<Float32Array> }>,
): Promise<AddJobResult> {
  const d = addJobData.parse(data);
  const encoder = await encoderFor(d.model);
  const vectors = await encoder.encode(d.texts);
  return {
    dim: encoder.dim,
    vectors: Buffer.from(vectors.buffer, vectors.byteOffset, vectors.byteLength).toString('base64'),
  };
}

/** The service's side: an Embedder whose encode() is an `add` job done by a worker. */
export class QueueEmbedder implements Embedder {
  private constructor(
    private readonly url: string,
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly model: AddJobData['model'],
    readonly dim: number,
    private readonly timeoutMs: number,
  ) {}

  static async open(
    url: string,
    model: AddJobData['model'],
    dim: number,
    timeoutMs = ADD_TIMEOUT_MS,
  ): Promise<QueueEmbedder> {
    const target: RedisTarget = parseQueueUrl(url, 'writeQueue');
    const options = { connection: connectionOptions(target), prefix: target.prefix };
    const queue = new Queue(queueName('add'), options);
    const events = new QueueEvents(queueName('add'), options);
    try {
      await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    } catch (e) {
      await Promise.all([queue.close(), events.close()]);
      throw new ParamineError(
        'UNAVAILABLE',
        `cannot reach the write queue at ${url}: ${(e as Error).message}`,
        {
          field: 'writeQueue',
          cause: e,
        },
      );
    }
    return new QueueEmbedder(url, queue, events, model, dim, timeoutMs);
  }

  async encode(texts: readonly string[]): Promise<Float32Array> {
    if (texts.length === 0) return new Float32Array(0);
    const data: AddJobData = { model: this.model, texts: [...texts] };
    const job: Job = await this.queue.add('add', data, {
      attempts: 3,
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: 24 * 3600 },
    });
    let result: unknown;
    try {
      result = await job.waitUntilFinished(this.events, this.timeoutMs);
    } catch (e) {
      // Not taken in time: the job is withdrawn where it still can be, so it never lands half-known.
      await job.remove().catch(() => {});
      const timedOut = /timed out/i.test((e as Error).message);
      throw new ParamineError(
        'UNAVAILABLE',
        timedOut
          ? `no paramine worker embedded this write within ${this.timeoutMs / 1000} s; start one with ` +
              `\`paramine worker --queue ${this.url}\` (nothing of the write was stored)`
          : `a worker failed to embed this write: ${(e as Error).message} (nothing of it was stored)`,
        { cause: e },
      );
    }
    const r = addJobResult.parse(result);
    const bytes = Buffer.from(r.vectors, 'base64');
    const vectors = new Float32Array(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    );
    if (r.dim !== this.dim || vectors.length !== texts.length * this.dim) {
      throw new ParamineError(
        'INTERNAL',
        `a worker answered ${vectors.length / r.dim} ${r.dim}-d vectors for ${texts.length} ${this.dim}-d texts`,
      );
    }
    return vectors;
  }

  #closed = false;

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([this.events.close(), this.queue.close()]);
  }
}

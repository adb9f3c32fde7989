/**
 * Dynamic batching, as text-embeddings-inference does it: texts from concurrent requests wait at most
 * `maxWaitMs` (or until `maxBatch` texts are queued) and are encoded in one call. One batch runs at a
 * time: ONNX Runtime already spreads a batch over every core, so parallel batches would only contend.
 */
import type { Embedder } from '../models/ports.js';

export interface BatcherOptions {
  maxBatch: number;
  maxWaitMs: number;
  /** Observability hooks (Prometheus in the server). */
  onBatch?: (size: number, ms: number) => void;
  onQueueDepth?: (texts: number) => void;
}

interface Waiting {
  texts: readonly string[];
  resolve: (v: Float32Array) => void;
  reject: (e: unknown) => void;
}

export class BatchingEncoder implements Embedder {
  readonly dim: number;
  private readonly inner: Embedder;
  private readonly opts: BatcherOptions;
  private queue: Waiting[] = [];
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(inner: Embedder, opts: BatcherOptions) {
    this.inner = inner;
    this.dim = inner.dim;
    this.opts = opts;
  }

  encode(texts: readonly string[]): Promise<Float32Array> {
    if (texts.length === 0) return Promise.resolve(new Float32Array(0));
    // A request bigger than a batch goes alone: splitting it would only delay its own answer.
    return new Promise((resolve, reject) => {
      this.queue.push({ texts, resolve, reject });
      this.queued += texts.length;
      this.opts.onQueueDepth?.(this.queued);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.running) return;
    if (this.queued >= this.opts.maxBatch || this.opts.maxWaitMs <= 0) {
      this.flush();
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.opts.maxWaitMs);
    }
  }

  private flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.running || this.queue.length === 0) return;
    const batch: Waiting[] = [];
    let n = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0] as Waiting;
      if (batch.length > 0 && n + next.texts.length > this.opts.maxBatch) break;
      batch.push(next);
      n += next.texts.length;
      this.queue.shift();
    }
    this.queued -= n;
    this.opts.onQueueDepth?.(this.queued);
    this.running = true;
    const started = performance.now();
    this.inner
      .encode(batch.flatMap((w) => w.texts))
      .then(
        (vectors) => {
          this.opts.onBatch?.(n, performance.now() - started);
          let off = 0;
          for (const w of batch) {
            const len = w.texts.length * this.dim;
            w.resolve(vectors.slice(off, off + len));
            off += len;
          }
        },
        (e: unknown) => {
          for (const w of batch) w.reject(e);
        },
      )
      .finally(() => {
        this.running = false;
        if (this.queue.length > 0) this.schedule();
      });
  }
}

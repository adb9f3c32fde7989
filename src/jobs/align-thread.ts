/**
 * A worker thread of the alignment's (scoring, counting n-grams), answering requests in the order they were
 * sent, so the caller can send the next before the last is answered: the two cores of a small machine work
 * on one alignment.
 */
import { parentPort, Worker } from 'node:worker_threads';
import { ParamineError } from '../errors.js';

/** What a handler answers: the value, and the buffers moved (not copied) to the caller with it. */
export interface Answer<R> {
  value: R;
  transfer?: ArrayBuffer[];
}

/** Worker side: each message handled in turn, its answer posted back. Call at a worker entry's top level. */
export function serveInOrder<Q, R>(handle: (request: Q) => Answer<R>): void {
  const port = parentPort;
  if (port === null) throw new Error('serveInOrder must run in a worker thread');
  port.on('message', (request: Q) => {
    const { value, transfer = [] } = handle(request);
    port.postMessage(value, transfer);
  });
}

/** Caller side: one worker thread; `name` is its entry module's name in this folder (without .ts / .js). */
export class OrderedThread<Q, R> {
  readonly #pending: Array<{ resolve: (v: R) => void; reject: (e: Error) => void }> = [];
  #failed: Error | undefined;

  private constructor(
    private readonly worker: Worker,
    private readonly name: string,
  ) {
    worker.on('message', (value: R) => this.#pending.shift()?.resolve(value));
    const fail = (e: Error) => {
      this.#failed ??= new ParamineError('INTERNAL', `the ${name} thread stopped: ${e.message}`, {
        cause: e,
      });
      for (const p of this.#pending.splice(0)) p.reject(this.#failed);
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('it exited')));
  }

  static start<Q, R>(name: string, workerData: unknown): OrderedThread<Q, R> {
    const self = import.meta.url;
    const entry = new URL(`./${name}${self.endsWith('.ts') ? '.ts' : '.js'}`, self);
    return new OrderedThread<Q, R>(new Worker(entry, { workerData }), name);
  }

  /** The request's answer, after those of every request sent before it. */
  call(request: Q, transfer: ArrayBuffer[] = []): Promise<R> {
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    return new Promise((resolve, reject) => {
      this.#pending.push({ resolve, reject });
      this.worker.postMessage(request, transfer);
    });
  }

  async close(): Promise<void> {
    this.#failed ??= new ParamineError('INTERNAL', `the ${this.name} thread stopped: it was closed`);
    await this.worker.terminate();
  }
}

/**
 * Running a model in a worker_thread, shared by the encoder and the cross-encoder.
 *
 * Measured: onnxruntime-node 1.30's `session.run` returns a promise but runs the whole inference on the
 * calling thread (it defers the synchronous native call with setImmediate), so a batch of 128 blocks the
 * event loop for about a second. A model therefore lives in its own worker (tokenizer, session, pooling);
 * the caller's thread only posts texts and receives transferred Float32Arrays. Calls are answered in order.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { type ErrorCode, isParamineError, ParamineError } from '../errors.js';

interface Request {
  id: number;
  method: string;
  arg: unknown;
}

interface WireError {
  code?: ErrorCode;
  message: string;
  field?: string;
}

type Response = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError };
type Hello = { ready: true; info: unknown } | { ready: false; error: WireError };

/** What a model worker is started with: the model's own data and the niceness of its threads. */
interface Start {
  data: unknown;
  nice: number;
}

let threadNice = 0;

/**
 * Niceness of the model threads started from now on (0: as the process). A service sets it above 0 so that
 * when the models fill every core, the event loop still gets the CPU first: refusals, health checks and
 * responses stay prompt instead of queueing behind inference.
 */
export function setModelThreadNice(nice: number): void {
  threadNice = nice;
}

/**
 * Lowers this thread's priority. Linux keeps a nice value per thread (setpriority on a thread id), names
 * the calling thread in /proc/thread-self, and gives threads started later (ONNX Runtime's pool, created
 * with the session) their creator's value. Elsewhere, or where refused, the thread runs as the process.
 */
function niceThisThread(nice: number): void {
  if (nice === 0) return;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    // not Linux, or not allowed: normal priority
  }
}

function toWire(e: unknown): WireError {
  if (isParamineError(e)) return e.field === undefined ? { code: e.code, message: e.message } : e.toJSON();
  return { message: e instanceof Error ? (e.stack ?? e.message) : String(e) };
}

function fromWire(w: WireError): Error {
  return new ParamineError(w.code ?? 'INTERNAL', w.message, w.field === undefined ? {} : { field: w.field });
}

/** Buffers of typed arrays in a result, moved rather than copied to the caller. */
function transferables(v: unknown): ArrayBuffer[] {
  if (ArrayBuffer.isView(v) && v.buffer instanceof ArrayBuffer) return [v.buffer];
  return [];
}

/** Worker side: the data the caller started this model worker with (ModelWorker.start's `data`). */
export const modelData = (): unknown => (workerData as Start).data;

/**
 * Worker side: opens the model from workerData, answers {id, method, arg} messages with the handlers, and
 * closes the model on a 'close' message. Call this at the top level of a worker entry module.
 */
export function serveModel<M, H extends Record<string, (model: M, arg: never) => Promise<unknown>>>(
  open: (data: unknown) => Promise<M>,
  info: (model: M) => unknown,
  handlers: H,
  close: (model: M) => Promise<void>,
): void {
  if (isMainThread || parentPort === null) throw new Error('serveModel must run in a worker thread');
  const port = parentPort;
  const start = workerData as Start;
  niceThisThread(start.nice);
  let model: M;
  open(start.data)
    .then((m) => {
      model = m;
      port.postMessage({ ready: true, info: info(m) } satisfies Hello);
    })
    .catch((e: unknown) => port.postMessage({ ready: false, error: toWire(e) } satisfies Hello));
  // Messages are handled one at a time so runs never overlap on the session's threads.
  let chain: Promise<void> = Promise.resolve();
  port.on('message', (req: Request) => {
    chain = chain.then(async () => {
      if (req.method === 'close') {
        await close(model);
        port.postMessage({ id: req.id, ok: true, value: null } satisfies Response);
        port.close();
        return;
      }
      const h = handlers[req.method];
      try {
        if (h === undefined) throw new Error(`unknown method ${req.method}`);
        const value = await h(model, req.arg as never);
        port.postMessage({ id: req.id, ok: true, value } satisfies Response, transferables(value));
      } catch (e) {
        port.postMessage({ id: req.id, ok: false, error: toWire(e) } satisfies Response);
      }
    });
  });
}

/** Caller side: one worker holding one model. */
export class ModelWorker<I> {
  readonly info: I;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private dead: Error | null = null;

  private constructor(worker: Worker, info: I) {
    this.worker = worker;
    this.info = info;
    worker.on('message', (res: Response) => {
      const p = this.pending.get(res.id);
      if (p === undefined) return;
      this.pending.delete(res.id);
      if (this.pending.size === 0) worker.unref();
      if (res.ok) p.resolve(res.value);
      else p.reject(fromWire(res.error));
    });
    const fail = (e: Error) => {
      this.dead ??= e;
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
    worker.on('error', (e) =>
      fail(new ParamineError('INTERNAL', `model worker crashed: ${e.message}`, { cause: e })),
    );
    worker.on('exit', () => fail(new ParamineError('UNAVAILABLE', 'the model is closed')));
    // An idle model must not keep the process alive.
    worker.unref();
  }

  /** Starts the worker and waits until it has opened the model (or failed to, with the same error). */
  static start<I>(entry: URL, data: unknown): Promise<ModelWorker<I>> {
    const worker = new Worker(entry, { workerData: { data, nice: threadNice } satisfies Start });
    return new Promise((resolve, reject) => {
      const onError = (e: Error) =>
        reject(new ParamineError('INTERNAL', `model worker failed: ${e.message}`));
      worker.once('error', onError);
      worker.once('message', (hello: Hello) => {
        worker.off('error', onError);
        if (hello.ready) resolve(new ModelWorker<I>(worker, hello.info as I));
        else {
          void worker.terminate();
          reject(fromWire(hello.error));
        }
      });
    });
  }

  call<T>(method: string, arg: unknown): Promise<T> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.ref();
      this.worker.postMessage({ id, method, arg } satisfies Request);
    });
  }

  async close(): Promise<void> {
    if (this.dead) return;
    try {
      await this.call('close', null);
    } finally {
      await this.worker.terminate();
    }
  }
}

/** The worker entry `name` next to `fromUrl`: name.ts when running from TypeScript sources (tests), else name.js. */
export function workerEntry(fromUrl: string, name = 'worker'): URL {
  return new URL(`./${name}${fromUrl.endsWith('.ts') ? '.ts' : '.js'}`, fromUrl);
}

/**
 * Dynamic batching with a bound, as text-embeddings-inference's queue does it: items (texts, pairs) from
 * concurrent requests wait at most `maxWaitMs` (or until `maxBatch` items are queued) and go to the model
 * in one call, at most `maxBatchCost` padded tokens a call (TEI's max_batch_tokens: one long text does not
 * make a batch of short ones pay its length). One call runs at a time: ONNX Runtime already spreads a batch
 * over every core, so parallel calls would only contend. Admission is by predicted wait, not by count
 * (CoDel's idea of a sojourn-time target): the work queued ahead of a request divided by the measured rate;
 * a request that would wait longer than `waitBudgetMs` behind at least ALWAYS_ADMITTED others, or overfill
 * the queue, is refused at once with OVERLOADED (a 503 with Retry-After) instead of waiting longer than any
 * client would. A request that needs this model after others (a search's rerank, once it is encoded and
 * searched) holds its place from its admission (`reserve`), so it is not refused after the others' time was
 * spent on it. A request whose signal aborts while queued (its client went away) leaves the queue and never
 * reaches the model.
 * Bulk work (mining jobs) is never refused and takes no room in the bound, but waits behind interactive
 * requests and is cut into batches, so a job's thousands of pairs do not hold a query up for seconds.
 */
import { answerError, ParamineError } from '../errors.js';
import type { Reservation } from '../models/ports.js';

export interface BatcherOptions<I = unknown> {
  /** What the model is called in errors ("encoder", "reranker"). */
  name: string;
  /** Most items per model call; a bigger request goes alone (splitting it would only delay its answer). */
  maxBatch: number;
  /** Longest wait to fill a batch; 0 sends what is queued at once. */
  maxWaitMs: number;
  /** Most items waiting (running ones aside); Infinity: unbounded. One request always fits an empty queue. */
  maxQueue: number;
  /**
   * Longest predicted wait a new request may face (the cost queued and running ahead of it over the
   * measured cost per second); beyond it, refused at once. Infinity or absent: by count only.
   */
  waitBudgetMs?: number | undefined;
  /** An item's cost (tokens, estimated); a batch costs its size times its dearest item (padding). Default 1. */
  cost?: ((item: I) => number) | undefined;
  /** Most cost per model call (padded tokens); a bigger request goes alone. Default: no limit. */
  maxBatchCost?: number | undefined;
  /** Observability hooks (Prometheus in the server). */
  onBatch?: ((size: number, ms: number) => void) | undefined;
  onQueueDepth?: ((items: number) => void) | undefined;
  onRejected?: (() => void) | undefined;
  /** Items dropped from the queue because their request was aborted. */
  onDropped?: ((items: number) => void) | undefined;
}

export interface SubmitOptions {
  signal?: AbortSignal | undefined;
  /** The place `reserve` held: the items are admitted under it (its release gives it over to them). */
  reservation?: Reservation | undefined;
  /**
   * Bulk work: never refused, served after interactive requests, split into batches (jobs, which pace
   * themselves and care for throughput, not latency).
   */
  unbounded?: boolean | undefined;
}

interface Waiting<I, O> {
  items: readonly I[];
  /** The items' summed cost and dearest item. */
  cost: number;
  dearest: number;
  resolve: (v: O[]) => void;
  reject: (e: unknown) => void;
  /** Removes the abort listener once the request leaves the queue. */
  detach: () => void;
}

/**
 * Requests that may always wait, whatever the predicted wait (the count bound still holds): a few clients
 * are never refused. A balanced rerank@20 costs ~0.3 s of model time on 2 cores, so with a 500 ms budget
 * the fourth of 4 clients was refused about every other time; under real overload hundreds wait, and the
 * budget decides as before (docs/benchmarks/serve.md, 2026-12-03).
 */
export const ALWAYS_ADMITTED = 3;

/** Throughput estimate weight of the newest batch: recent batches matter most for Retry-After. */
const RATE_WEIGHT = 0.3;

export class Batcher<I, O> {
  readonly #run: (items: I[]) => Promise<O[]>;
  readonly #o: BatcherOptions<I>;
  /** Interactive requests, then bulk chunks; `#queued` counts the interactive items (the bound's). */
  readonly #queue: Array<Waiting<I, O>> = [];
  readonly #bulk: Array<Waiting<I, O>> = [];
  #queued = 0;
  #bulkQueued = 0;
  /** Cost of the interactive items waiting, and of the batch running (what a new request waits behind). */
  #queuedCost = 0;
  #runningCost = 0;
  /** Places held by `reserve` and not yet submitted or released: how many, their items and their cost. */
  #held = 0;
  #heldItems = 0;
  #heldCost = 0;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  /** Cost per second, smoothed; undefined before the first batch. */
  #rate: number | undefined;
  /** Mean cost of an item run so far, smoothed (prices an `admit(n)` that has no items yet). */
  #itemCost = 1;

  /** `run` maps n items to n outputs, in order. */
  constructor(run: (items: I[]) => Promise<O[]>, options: BatcherOptions<I>) {
    this.#run = run;
    this.#o = options;
  }

  /** Items waiting for the model, bulk ones included. */
  get depth(): number {
    return this.#queued + this.#bulkQueued;
  }

  /**
   * Throws OVERLOADED (counted as a refusal) when a request of `n` items would be refused now: a request
   * that needs this model later checks here first, before spending other models' time on it.
   */
  admit(n: number, cost = n * this.#itemCost): void {
    const ahead = this.#queued + this.#heldItems;
    const busy = ahead > 0 || this.#running;
    const full = ahead > 0 && ahead + n > this.#o.maxQueue;
    const late =
      this.#queue.length + this.#held >= ALWAYS_ADMITTED &&
      this.predictedWaitMs(cost) > (this.#o.waitBudgetMs ?? Number.POSITIVE_INFINITY);
    if (busy && (full || late)) {
      this.#o.onRejected?.();
      throw this.#overloaded();
    }
  }

  /**
   * Admits `n` items (or throws OVERLOADED, as `admit`) and holds their place until they are submitted
   * with the reservation or it is released: requests admitted together cannot overfill the queue, and an
   * admitted one is not refused later, after its other models' time was spent on it.
   */
  reserve(n: number, cost = n * this.#itemCost): Reservation {
    this.admit(n, cost);
    this.#held += 1;
    this.#heldItems += n;
    this.#heldCost += cost;
    let held = true;
    return {
      release: () => {
        if (!held) return false;
        held = false;
        this.#held -= 1;
        this.#heldItems -= n;
        this.#heldCost -= cost;
        return true;
      },
    };
  }

  /** How long a request of `cost` would take from now to its answer at the measured rate (0 before any). */
  predictedWaitMs(cost = 0): number {
    if (this.#rate === undefined) return 0;
    return ((this.#queuedCost + this.#heldCost + this.#runningCost + cost) / this.#rate) * 1000;
  }

  submit(items: readonly I[], options: SubmitOptions = {}): Promise<O[]> {
    if (items.length === 0) return Promise.resolve([]);
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(aborted(this.#o.name));
    if (options.unbounded) return this.#submitBulk(items);
    const { cost, dearest } = this.#costOf(items);
    try {
      if (options.reservation?.release() !== true) this.admit(items.length, cost);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<O[]>((resolve, reject) => {
      const entry: Waiting<I, O> = { items, cost, dearest, resolve, reject, detach: () => {} };
      if (signal) {
        const onAbort = () => this.#drop(entry);
        signal.addEventListener('abort', onAbort, { once: true });
        entry.detach = () => signal.removeEventListener('abort', onAbort);
      }
      this.#queue.push(entry);
      this.#queuedCost += cost;
      this.#setDepth(this.#queued + items.length, this.#bulkQueued);
      this.#schedule();
    });
  }

  async #submitBulk(items: readonly I[]): Promise<O[]> {
    const chunks: Array<Promise<O[]>> = [];
    for (let i = 0; i < items.length; i += this.#o.maxBatch) {
      const part = items.slice(i, i + this.#o.maxBatch);
      chunks.push(
        new Promise<O[]>((resolve, reject) => {
          this.#bulk.push({ items: part, ...this.#costOf(part), resolve, reject, detach: () => {} });
        }),
      );
    }
    this.#setDepth(this.#queued, this.#bulkQueued + items.length);
    this.#schedule();
    return (await Promise.all(chunks)).flat();
  }

  #drop(entry: Waiting<I, O>): void {
    const i = this.#queue.indexOf(entry);
    if (i < 0) return; // already running: it finishes, its answer goes nowhere
    this.#queue.splice(i, 1);
    this.#queuedCost -= entry.cost;
    this.#setDepth(this.#queued - entry.items.length, this.#bulkQueued);
    this.#o.onDropped?.(entry.items.length);
    entry.reject(aborted(this.#o.name));
  }

  #costOf(items: readonly I[]): { cost: number; dearest: number } {
    const f = this.#o.cost;
    if (f === undefined) return { cost: items.length, dearest: 1 };
    let cost = 0;
    let dearest = 0;
    for (const it of items) {
      const c = f(it);
      cost += c;
      dearest = Math.max(dearest, c);
    }
    return { cost, dearest };
  }

  #overloaded(): ParamineError {
    // How long the queue takes to drain at the recent rate: when to come back.
    const seconds = this.predictedWaitMs() / 1000 || 1;
    return answerError(
      'OVERLOADED',
      `the ${this.#o.name} is busy (${this.#queued} waiting, about ${Math.round(this.predictedWaitMs())} ms of work); retry later`,
      { retryAfterSeconds: Math.min(60, Math.max(1, Math.ceil(seconds))) },
    );
  }

  #setDepth(interactive: number, bulk: number): void {
    this.#queued = interactive;
    this.#bulkQueued = bulk;
    this.#o.onQueueDepth?.(interactive + bulk);
  }

  #schedule(): void {
    if (this.#running) return;
    if (this.depth >= this.#o.maxBatch || this.#o.maxWaitMs <= 0) {
      this.#flush();
    } else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#flush(), this.#o.maxWaitMs);
    }
  }

  /**
   * The next batch: whole requests, oldest first, up to maxBatch items (or one bigger request); room an
   * interactive batch leaves goes to bulk chunks.
   */
  #take(): Array<Waiting<I, O>> {
    const batch: Array<Waiting<I, O>> = [];
    const taken = { n: 0, dearest: 0 };
    const interactive = this.#takeFrom(this.#queue, batch, taken);
    this.#queuedCost -= batch.reduce((s, w) => s + w.cost, 0);
    const bulk = this.#takeFrom(this.#bulk, batch, taken);
    this.#setDepth(this.#queued - interactive, this.#bulkQueued - bulk);
    return batch;
  }

  /** Moves entries from `queue` into `batch` while they fit (items and padded cost); returns the items moved. */
  #takeFrom(
    queue: Array<Waiting<I, O>>,
    batch: Array<Waiting<I, O>>,
    taken: { n: number; dearest: number },
  ): number {
    let moved = 0;
    const maxCost = this.#o.maxBatchCost ?? Number.POSITIVE_INFINITY;
    while (queue.length > 0) {
      const next = queue[0] as Waiting<I, O>;
      const n = taken.n + next.items.length;
      const dearest = Math.max(taken.dearest, next.dearest);
      if (batch.length > 0 && (n > this.#o.maxBatch || n * dearest > maxCost)) break;
      batch.push(next);
      next.detach();
      taken.n = n;
      taken.dearest = dearest;
      moved += next.items.length;
      queue.shift();
    }
    return moved;
  }

  #flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#running || this.depth === 0) return;
    const batch = this.#take();
    const items = batch.flatMap((w) => w.items);
    const cost = batch.reduce((s, w) => s + w.cost, 0);
    this.#running = true;
    this.#runningCost = cost;
    const started = performance.now();
    this.#run(items).then(
      (out) => {
        this.#observe(items.length, cost, performance.now() - started);
        // Idle before the answers go out: a caller that submits again on its answer sees an idle model.
        this.#idle();
        let off = 0;
        for (const w of batch) {
          w.resolve(out.slice(off, off + w.items.length));
          off += w.items.length;
        }
      },
      (e: unknown) => {
        this.#idle();
        for (const w of batch) w.reject(e);
      },
    );
  }

  #idle(): void {
    this.#running = false;
    this.#runningCost = 0;
    if (this.depth > 0) this.#schedule();
  }

  #observe(items: number, cost: number, ms: number): void {
    this.#o.onBatch?.(items, ms);
    const rate = cost / Math.max(ms / 1000, 1e-3);
    this.#itemCost = RATE_WEIGHT * (cost / Math.max(items, 1)) + (1 - RATE_WEIGHT) * this.#itemCost;
    this.#rate = this.#rate === undefined ? rate : RATE_WEIGHT * rate + (1 - RATE_WEIGHT) * this.#rate;
  }
}

function aborted(name: string): ParamineError {
  return new ParamineError('ABORTED', `the request was abandoned before the ${name} ran it`);
}

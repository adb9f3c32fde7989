/**
 * Readiness that means "answers queries": a tiny encode, a one-neighbour search and (with a reranker) one
 * pair scored, straight on the models (not through the request queues, so a full queue is not "down").
 * The answer is cached for a few seconds, and concurrent probes share one run, so a probe every second
 * from a load balancer costs the models nothing noticeable.
 */
import type { Embedder } from '../encode/index.js';
import type { PairScorer } from '../rerank/index.js';
import type { AnnIndex } from '../search/core.js';

export interface ProbeParts {
  encoder: Embedder;
  index: AnnIndex & { readonly ntotal: number };
  reranker?: PairScorer | undefined;
  /** False once the service is closing: every check fails without touching the models. */
  open: () => boolean;
}

export interface ProbeOptions {
  /** How long an answer is reused. */
  ttlMs?: number;
  /** A check slower than this fails. */
  timeoutMs?: number;
}

const PROBE_TEXT = 'Is the service ready?';

export class ReadinessProbe {
  readonly #parts: ProbeParts;
  readonly #ttlMs: number;
  readonly #timeoutMs: number;
  #last: { at: number; checks: Record<string, boolean> } | undefined;
  #running: Promise<Record<string, boolean>> | undefined;

  constructor(parts: ProbeParts, options: ProbeOptions = {}) {
    this.#parts = parts;
    this.#ttlMs = options.ttlMs ?? 5000;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** Named checks, all true when the models and the index answer. */
  async check(): Promise<Record<string, boolean>> {
    if (!this.#parts.open()) return this.#failed();
    if (this.#last && performance.now() - this.#last.at < this.#ttlMs) return this.#last.checks;
    this.#running ??= this.#probe().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  #failed(): Record<string, boolean> {
    return {
      models: false,
      index: false,
      ...(this.#parts.reranker ? { reranker: false } : {}),
    };
  }

  async #probe(): Promise<Record<string, boolean>> {
    const { encoder, index, reranker } = this.#parts;
    let vector: Float32Array | undefined;
    const models = await this.#within(async () => {
      vector = await encoder.encode([PROBE_TEXT]);
      return vector.length === encoder.dim && vector.every(Number.isFinite);
    });
    const indexOk =
      vector !== undefined &&
      (await this.#within(async () => {
        const { ids } = await index.search(vector as Float32Array, 1);
        return index.ntotal === 0 || (ids[0] ?? -1n) >= 0n;
      }));
    const checks: Record<string, boolean> = { models, index: indexOk };
    if (reranker) {
      checks.reranker = await this.#within(async () => {
        const [s] = await reranker.score([[PROBE_TEXT, PROBE_TEXT]]);
        return s !== undefined && reranker.labels.includes(s.label);
      });
    }
    this.#last = { at: performance.now(), checks };
    return checks;
  }

  /** The check's answer, or false when it throws or takes longer than the timeout. */
  async #within(check: () => Promise<boolean>): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.#timeoutMs);
    });
    try {
      return await Promise.race([check().catch(() => false), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * CrossEncoder: pair classification with labels from the model's config.json, computed in a worker thread
 * so inference never blocks the caller's event loop. `{ worker: false }` runs it on the calling thread.
 */
import { type ModelBackend, ModelHandle } from '../models/handle.js';
import type { Calibration, PairScorer } from '../models/ports.js';
import { ModelWorker, workerEntry } from '../models/worker.js';
import {
  CrossEncoderCore,
  type CrossEncoderCoreOptions,
  type CrossEncoderInfo,
  checkPairs,
  type Pair,
  type PairScore,
} from './core.js';

export interface CrossEncoderOptions extends CrossEncoderCoreOptions {
  /** Run in a worker thread (default true). */
  worker?: boolean | undefined;
}

interface Backend extends ModelBackend<CrossEncoderInfo> {
  score(pairs: Pair[]): Promise<PairScore[]>;
}

export class CrossEncoder extends ModelHandle<CrossEncoderInfo, Backend> implements PairScorer {
  private constructor(backend: Backend) {
    super(backend);
  }

  static async open(dir: string, opts: CrossEncoderOptions = {}): Promise<CrossEncoder> {
    const { worker = true, ...coreOpts } = opts;
    if (!worker) {
      const core = await CrossEncoderCore.open(dir, coreOpts);
      return new CrossEncoder({ info: core.info, score: (p) => core.score(p), close: () => core.close() });
    }
    const w = await ModelWorker.start<CrossEncoderInfo>(workerEntry(import.meta.url), {
      dir,
      opts: coreOpts,
    });
    return new CrossEncoder({
      info: w.info,
      score: (pairs) => w.call<PairScore[]>('score', pairs),
      close: () => w.close(),
    });
  }

  /** Label names in class-id order. */
  get labels(): readonly string[] {
    return this.backend.info.labels;
  }

  /** The labels that mean "paraphrase" (config.json's `paramine.positive_labels`, else guessed). */
  get positiveLabels(): readonly string[] {
    return this.backend.info.positiveLabels;
  }

  /** config.json's `paramine.calibration` (combines P(paraphrase) with the cosine when ranking). */
  get calibration(): Calibration | undefined {
    return this.backend.info.calibration;
  }

  /** config.json's `paramine.rerank_order` ('cosine': reranked rows keep the bi-encoder's order). */
  get rerankOrder(): 'probability' | 'cosine' | undefined {
    return this.backend.info.rerankOrder;
  }

  /** Per pair: every label's probability (summing to 1) and the arg-max label. */
  async score(pairs: readonly Pair[]): Promise<PairScore[]> {
    checkPairs(pairs);
    if (pairs.length === 0) return [];
    return this.backend.score(pairs as Pair[]);
  }
}

/**
 * CrossEncoder: pair classification with labels from the model's config.json, computed in a worker thread
 * so inference never blocks the caller's event loop. `{ worker: false }` runs it on the calling thread.
 *
 * A graph that quantizes its activations at run time scores one pair per session.run (runtime.ts: else a
 * pair's label would depend on its batch). One pair is too little work for several intra-op threads, so
 * such a model runs in one worker per thread, each single-threaded, and a call's pairs are dealt out
 * among them: measured on the MRPC held-out pairs (2 vCPUs), 2 workers x 1 thread score 92 pairs/s where
 * 1 x 2 threads scored 79 and batches of 20 (batch-dependent labels) 95.
 */
import { availableParallelism } from 'node:os';
import { readModelDir } from '../models/dir.js';
import { type ModelBackend, ModelHandle } from '../models/handle.js';
import type { Calibration, PairScorer } from '../models/ports.js';
import { hasDynamicQuantization } from '../models/runtime.js';
import { TokenCount } from '../models/token-count.js';
import { ModelWorker, workerEntry } from '../models/worker.js';
import {
  CrossEncoderCore,
  type CrossEncoderCoreOptions,
  type CrossEncoderInfo,
  checkPairs,
  type LabelCalibration,
  type Pair,
  type PairScore,
} from './core.js';

export interface CrossEncoderOptions extends CrossEncoderCoreOptions {
  /** Run in a worker thread (default true). */
  worker?: boolean | undefined;
  /** Worker threads (default: one per ORT thread for a graph that scores pair by pair, else one). */
  workers?: number | undefined;
}

interface Backend extends ModelBackend<CrossEncoderInfo> {
  score(pairs: Pair[]): Promise<PairScore[]>;
}

export class CrossEncoder extends ModelHandle<CrossEncoderInfo, Backend> implements PairScorer {
  readonly #count: TokenCount;

  private constructor(backend: Backend, count: TokenCount) {
    super(backend);
    this.#count = count;
  }

  static async open(dir: string, opts: CrossEncoderOptions = {}): Promise<CrossEncoder> {
    const { worker = true, workers: given, ...coreOpts } = opts;
    const md = await readModelDir(dir, coreOpts);
    const count = TokenCount.of(md);
    if (!worker) {
      const core = await CrossEncoderCore.open(dir, coreOpts);
      return new CrossEncoder(
        { info: core.info, score: (p) => core.score(p), close: () => core.close() },
        count,
      );
    }
    const threads = coreOpts.threads ?? availableParallelism();
    const rowWise = await hasDynamicQuantization(md.onnxPath);
    const n = Math.max(1, given ?? (rowWise ? threads : 1));
    const each = n > 1 ? { ...coreOpts, threads: Math.max(1, Math.floor(threads / n)) } : coreOpts;
    const workers: ModelWorker<CrossEncoderInfo>[] = [];
    try {
      for (let i = 0; i < n; i++) {
        workers.push(
          await ModelWorker.start<CrossEncoderInfo>(workerEntry(import.meta.url), { dir, opts: each }),
        );
      }
    } catch (e) {
      await Promise.all(workers.map((w) => w.close()));
      throw e;
    }
    return new CrossEncoder(
      {
        info: (workers[0] as ModelWorker<CrossEncoderInfo>).info,
        score: (pairs) => dealt(workers, pairs),
        close: async () => {
          await Promise.all(workers.map((w) => w.close()));
        },
      },
      count,
    );
  }

  /** Tokens the model runs for a pair (counted here, on the caller's thread: batchers size by it). */
  tokens(pair: Pair): number {
    return this.#count.pair(pair);
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

  /** config.json's `paramine.threshold`: the label cut on the reported P(paraphrase) (absent: arg-max). */
  get threshold(): number | undefined {
    return this.backend.info.threshold;
  }

  /** config.json's `paramine.label_calibration`: what the reported P(paraphrase) is of the model's logit. */
  get labelCalibration(): LabelCalibration | undefined {
    return this.backend.info.labelCalibration;
  }

  /** config.json's `paramine.rerank_order` ('cosine': reranked rows keep the bi-encoder's order). */
  get rerankOrder(): 'probability' | 'cosine' | undefined {
    return this.backend.info.rerankOrder;
  }

  /** config.json's `paramine.cascade`: the teacher and the band it labels in the `balanced` mode. */
  get cascade(): { teacher: string; band: [number, number] } | undefined {
    return this.backend.info.cascade;
  }

  /** Per pair: every label's probability (summing to 1) and the arg-max label. */
  async score(pairs: readonly Pair[]): Promise<PairScore[]> {
    checkPairs(pairs);
    if (pairs.length === 0) return [];
    return this.backend.score(pairs as Pair[]);
  }
}

/** Pairs dealt out round-robin among the workers (lengths even out), the scores put back in order. */
async function dealt(workers: readonly ModelWorker<CrossEncoderInfo>[], pairs: Pair[]): Promise<PairScore[]> {
  if (workers.length === 1 || pairs.length === 1) {
    return (workers[0] as ModelWorker<CrossEncoderInfo>).call<PairScore[]>('score', pairs);
  }
  const n = Math.min(workers.length, pairs.length);
  const parts = await Promise.all(
    Array.from({ length: n }, (_, w) =>
      (workers[w] as ModelWorker<CrossEncoderInfo>).call<PairScore[]>(
        'score',
        pairs.filter((_, i) => i % n === w),
      ),
    ),
  );
  return pairs.map((_, i) => (parts[i % n] as PairScore[])[Math.floor(i / n)] as PairScore);
}

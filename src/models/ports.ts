/**
 * The two model ports every consumer codes against: an `Embedder` (sentence -> vector; the encoder, the
 * batched encoder, the indexer's and the jobs' encoders) and a `PairScorer` (pair -> label probabilities;
 * the cross-encoder and its batcher). Exported by `encode/` and `rerank/`; declared here, beside the model
 * runtime both build on, so the search core can take a scorer without importing the rerank stage.
 */

export interface Embedder {
  /** Embedding size. */
  readonly dim: number;
  /**
   * n × dim vectors, row i for texts[i]. A signal that aborts before the texts reach the model drops them
   * (the batcher answers with an abort error); once a batch runs it finishes.
   */
  encode(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array>;
  /** Batched ports only: throws OVERLOADED at once when `n` more texts would be refused now. */
  admit?(n: number): void;
  /** Tokens the model runs for a text, by its own tokenizer (models that know it: what a batcher sizes by). */
  tokens?(text: string): number;
}

export interface PairScore {
  /**
   * The served label: for a binary model with a cut (config.json's `paramine.threshold`), the positive label
   * when P(paraphrase) >= the cut, else the negative one; without a cut, the arg-max (ties to the lower id).
   */
  label: string;
  /** Every label's probability; they sum to 1. */
  probabilities: Record<string, number>;
  /** The model that labeled the pair (its directory name): the student or, in a cascade, the teacher. */
  model?: string | undefined;
}

/** Who labels a pair: the student alone, the student with the teacher where it is unsure, or the teacher. */
export const LABEL_MODES = ['fast', 'balanced', 'best'] as const;
export type LabelMode = (typeof LABEL_MODES)[number];

export interface ScoreOptions {
  /** Default: the scorer's own (`balanced` where a cascade is configured). */
  mode?: LabelMode | undefined;
  /** The place `PairScorer.reserve` held for these pairs: they are admitted under it, not checked again. */
  reservation?: Reservation | undefined;
}

/** A place held in a model's queue (PairScorer.reserve). */
export interface Reservation {
  /** Gives the place back; true when it was still held (a later call, or the submit that used it: false). */
  release(): boolean;
}

export type Pair = readonly [string, string];

/**
 * config.json's `paramine.calibration`: the rerank order follows sigmoid(w_logit * logit(P(paraphrase)) +
 * w_cosine * cosine + bias), fitted by the training script for the bi-encoder named by `encoder` (labels and
 * reported probabilities stay the cross-encoder's: search/rank.ts).
 */
export interface Calibration {
  w_logit: number;
  w_cosine: number;
  bias: number;
  encoder?: string | undefined;
}

/**
 * config.json's `paramine.label_calibration`: a binary model reports P(paraphrase) = sigmoid(a * z + b) of its
 * own logit z (Platt scaling; a > 0).
 */
export interface LabelCalibration {
  a: number;
  b: number;
}

export interface PairScorer {
  /** Label names in class-id order. */
  readonly labels: readonly string[];
  /** The labels that mean "paraphrase" (config.json's `paramine.positive_labels`, else guessed). */
  readonly positiveLabels: readonly string[];
  /** How to combine P(paraphrase) with the bi-encoder cosine when ranking (wrappers must pass it on). */
  readonly calibration?: Calibration | undefined;
  /** 'cosine': reranked rows keep the bi-encoder's order (config.json's `paramine.rerank_order`). */
  readonly rerankOrder?: 'probability' | 'cosine' | undefined;
  /**
   * One score per pair, in order, the same for (a, b) and (b, a). The signal works as for `Embedder.encode`.
   */
  score(pairs: readonly Pair[], signal?: AbortSignal, options?: ScoreOptions): Promise<PairScore[]>;
  /** Batched ports only: throws OVERLOADED at once when `n` more pairs would be refused now. */
  admit?(n: number): void;
  /**
   * Batched ports only: admits `n` pairs now (or throws OVERLOADED) and holds their place, counted in the
   * queue's bound and predicted wait, until a `score` call with the reservation submits them or `release()`.
   * A search admits its rerank before it encodes and searches: without a held place, hundreds of requests
   * admitted in the same moment were refused at the rerank after their encoding and search were spent.
   */
  reserve?(n: number): Reservation;
  /** Tokens the model runs for a pair, by its own tokenizer, as `Embedder.tokens`. */
  tokens?(pair: Pair): number;
}

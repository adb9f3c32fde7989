/**
 * The cross-encoder proper, on the thread that calls it: a sequence-classification ONNX model scoring
 * sentence pairs. Labels come from config.json's id2label (any set: binary, or the Turku scheme 4, 4>, 4<,
 * 3, 2, 1 with flags i, s); every label's probability is returned with the arg-max. `CrossEncoder`
 * (cross-encoder.ts) runs this in a worker thread.
 */

import { ParamineError } from '../errors.js';
import { labelsOf, type PairOrder } from '../models/dir.js';
import type { ModelInfo } from '../models/handle.js';
import type { Calibration, LabelCalibration, Pair, PairScore } from '../models/ports.js';
import type { ModelRuntime } from '../models/runtime.js';
import { type Batch, floatOutput, type RuntimeOptions } from '../models/runtime.js';
import { RuntimeCore } from '../models/runtime-core.js';
import { labelAt, positiveLabelsOf } from '../text/labels.js';

export type CrossEncoderCoreOptions = RuntimeOptions;

export interface CrossEncoderInfo extends ModelInfo {
  labels: string[];
  /** The labels that mean "paraphrase": config.json's `paramine.positive_labels`, else guessed from names. */
  positiveLabels: string[];
  /** config.json's `paramine.calibration`, when the training script wrote one. */
  calibration?: Calibration | undefined;
  /** config.json's `paramine.threshold`: the label cut on P(paraphrase) (absent: arg-max). */
  threshold?: number | undefined;
  /** config.json's `paramine.label_calibration`: the reported P(paraphrase) is sigmoid(a * logit + b). */
  labelCalibration?: LabelCalibration | undefined;
  /** config.json's `paramine.rerank_order`. */
  rerankOrder?: 'probability' | 'cosine' | undefined;
  /** Which text of a pair the model reads first (`paramine.pair_order`, default shorter first). */
  pairOrder: PairOrder;
  /** config.json's `paramine.cascade`: the teacher and the band of P(paraphrase) it labels in `balanced`. */
  cascade?: { teacher: string; band: [number, number] } | undefined;
}

export type { LabelCalibration, Pair, PairScore };

export function checkPairs(pairs: unknown): asserts pairs is Pair[] {
  if (!Array.isArray(pairs)) throw new ParamineError('BAD_INPUT', 'pairs must be an array of [text, text]');
  pairs.forEach((p: unknown, i) => {
    if (!Array.isArray(p) || p.length !== 2 || typeof p[0] !== 'string' || typeof p[1] !== 'string') {
      throw new ParamineError('BAD_INPUT', 'a pair must be two strings', { field: `pairs[${i}]` });
    }
  });
}

export class CrossEncoderCore extends RuntimeCore {
  /** Label names in class-id order. */
  readonly labels: readonly string[];
  readonly positiveLabels: readonly string[];
  private readonly output: string;
  /** One logit read as P(labels[1]) through a sigmoid. */
  private readonly sigmoid: boolean;
  /** config.json's `paramine.threshold`: the label cut on P(paraphrase). */
  private readonly threshold: number | undefined;
  /** Which text of a pair is read first (config.json's `paramine.pair_order`). */
  readonly pairOrder: PairOrder;
  /** Platt scaling of the positive label's logit, and the class ids it reads (binary models only). */
  private readonly platt: { a: number; b: number; pos: number; neg: number } | undefined;

  private constructor(rt: ModelRuntime) {
    super(rt);
    const names = rt.outputNames;
    const output = names.includes('logits') ? 'logits' : names[0];
    if (output === undefined) throw new ParamineError('BAD_CONFIG', `${rt.modelDir.onnxPath} has no outputs`);
    this.output = output;
    const meta = rt.outputMetadata.find((m) => m.name === output);
    const last = meta?.isTensor ? meta.shape[meta.shape.length - 1] : undefined;
    let labels = labelsOf(rt.modelDir);
    const nLogits = typeof last === 'number' ? last : labels.length;
    if (nLogits === 1) {
      // A single-logit (regression-style) head, as sentence-transformers' binary cross-encoders have:
      // sigmoid gives P(positive). With one or no configured name, the labels are '0' / '1' as in MRPC.
      if (labels.length !== 2) labels = ['0', '1'];
      this.sigmoid = true;
    } else {
      if (labels.length === 0) labels = Array.from({ length: nLogits }, (_, i) => String(i));
      if (labels.length !== nLogits) {
        throw new ParamineError(
          'BAD_CONFIG',
          `${rt.modelDir.dir}: config.json id2label has ${labels.length} labels but the graph gives ${nLogits} logits`,
          { field: 'config.json' },
        );
      }
      this.sigmoid = false;
    }
    if (new Set(labels).size !== labels.length) {
      throw new ParamineError('BAD_CONFIG', `${rt.modelDir.dir}: duplicate label names in id2label`, {
        field: 'config.json',
      });
    }
    this.labels = labels;
    this.positiveLabels = declaredPositive(rt, labels);
    this.threshold = rt.modelDir.config.paramine?.threshold;
    this.pairOrder = rt.modelDir.config.paramine?.pair_order ?? 'shorter-first';
    this.platt = plattOf(rt, labels, this.positiveLabels);
  }

  static open(dir: string, opts: CrossEncoderCoreOptions = {}): Promise<CrossEncoderCore> {
    return RuntimeCore.openWith(dir, opts, (rt) => new CrossEncoderCore(rt));
  }

  get info(): CrossEncoderInfo {
    return {
      labels: [...this.labels],
      positiveLabels: [...this.positiveLabels],
      calibration: this.rt.modelDir.config.paramine?.calibration,
      threshold: this.threshold,
      labelCalibration: this.platt && { a: this.platt.a, b: this.platt.b },
      rerankOrder: this.rt.modelDir.config.paramine?.rerank_order,
      pairOrder: this.pairOrder,
      cascade: cascadeOf(this.rt.modelDir.config.paramine?.cascade),
      modelId: this.modelId,
      onnxSha256: this.onnxSha256,
      onnxFile: this.onnxFile,
      maxLength: this.maxLength,
    };
  }

  async score(pairs: readonly Pair[]): Promise<PairScore[]> {
    checkPairs(pairs);
    const out: PairScore[] = new Array(pairs.length);
    if (pairs.length === 0) return out;
    const tok = this.rt.tokenizer;
    const order = this.pairOrder;
    const encoded = await this.rt.tokenize(pairs, (pair) => {
      const [a, b] = canonicalPair(pair, order);
      return tok.encodePair(a, b);
    });
    await this.rt.runAll(encoded, (batch, result) => this.take(batch, floatOutput(result, this.output), out));
    return out;
  }

  /** The logit of P(positive): the single logit (P of class 1) or the difference of two. */
  private positiveLogit(logits: Float32Array, c: { pos: number; neg: number }): number {
    if (this.sigmoid) return c.pos === 1 ? logits[0]! : -logits[0]!;
    return logits[c.pos]! - logits[c.neg]!;
  }

  private take(batch: Batch, t: { data: Float32Array; dims: number[] }, out: PairScore[]): void {
    const n = this.sigmoid ? 1 : this.labels.length;
    if (t.dims.length !== 2 || t.dims[0] !== batch.rows.length || t.dims[1] !== n) {
      throw new ParamineError(
        'BAD_CONFIG',
        `${this.rt.modelDir.onnxFile}: output ${this.output} has shape [${t.dims}], expected [${batch.rows.length},${n}]`,
      );
    }
    batch.rows.forEach((row, k) => {
      const logits = t.data.subarray(k * n, (k + 1) * n);
      const p = this.platt
        ? calibratedPair(this.platt, this.positiveLogit(logits, this.platt))
        : this.sigmoid
          ? sigmoidPair(logits[0]!)
          : softmax(logits);
      const probabilities: Record<string, number> = {};
      p.forEach((x, i) => {
        probabilities[this.labels[i]!] = x;
      });
      out[row] = { label: labelAt(probabilities, this.positiveLabels, this.threshold), probabilities };
    });
  }
}

function cascadeOf(c: { teacher: string; band: [number, number] } | undefined) {
  return c && { teacher: c.teacher, band: c.band };
}

/**
 * A pair in the order the model reads it, the same for (a, b) and (b, a): the shorter (or longer) text first,
 * ties broken by code-unit order, so a pair's score never depends on which sentence came first.
 */
export function canonicalPair(pair: Pair, order: PairOrder = 'shorter-first'): Pair {
  const [a, b] = pair;
  const byLength = order === 'shorter-first' ? a.length - b.length : b.length - a.length;
  return byLength < 0 || (byLength === 0 && a <= b) ? pair : [b, a];
}

/** config.json's declared positive labels (each must be a label of the model), else the guess from names. */
function declaredPositive(rt: ModelRuntime, labels: readonly string[]): string[] {
  const declared = rt.modelDir.config.paramine?.positive_labels;
  const unknown = declared?.filter((l) => !labels.includes(l)) ?? [];
  if (unknown.length > 0) {
    throw new ParamineError(
      'BAD_CONFIG',
      `${rt.modelDir.dir}: paramine.positive_labels names ${unknown.join(', ')}, not in id2label (${labels.join(', ')})`,
      { field: 'config.json' },
    );
  }
  return positiveLabelsOf(labels, declared);
}

/**
 * The label calibration of a binary model: the logit of P(positive) is l[pos] - l[neg] of two logits (or the
 * single logit), and the reported probability sigmoid(a * that + b). A model with other labels has none.
 */
function plattOf(
  rt: ModelRuntime,
  labels: readonly string[],
  positive: readonly string[],
): { a: number; b: number; pos: number; neg: number } | undefined {
  const lc = rt.modelDir.config.paramine?.label_calibration;
  if (lc === undefined) return undefined;
  if (labels.length !== 2 || positive.length !== 1) {
    throw new ParamineError(
      'BAD_CONFIG',
      `${rt.modelDir.dir}: paramine.label_calibration needs a binary model (one positive of two labels), not ${labels.join(', ')}`,
      { field: 'config.json' },
    );
  }
  const pos = labels.indexOf(positive[0] as string);
  return { a: lc.a, b: lc.b, pos, neg: 1 - pos };
}

/** [P(class 0), P(class 1)] from the calibrated logit of the positive class (at `pos`). */
function calibratedPair(c: { a: number; b: number; pos: number }, z: number): number[] {
  const p = 1 / (1 + Math.exp(-(c.a * z + c.b)));
  return c.pos === 1 ? [1 - p, p] : [p, 1 - p];
}

/** Softmax in float64 (max-shifted so large logits cannot overflow). */
export function softmax(logits: ArrayLike<number>): number[] {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]!);
  const e = Array.from({ length: logits.length }, (_, i) => Math.exp(logits[i]! - max));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

function sigmoidPair(x: number): number[] {
  const p = 1 / (1 + Math.exp(-x));
  return [1 - p, p];
}

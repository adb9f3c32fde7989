/**
 * The encoder proper, on the thread that calls it: tokenizer + session + pooling over an SBERT-style ONNX
 * model directory; L2-normalized vectors, n × dim in one Float32Array, in the order of the input texts.
 * `Encoder` (encoder.ts) runs this in a worker thread.
 */

import { ParamineError } from '../errors.js';
import type { Pooling } from '../models/dir.js';
import type { ModelInfo } from '../models/handle.js';
import type { ModelRuntime } from '../models/runtime.js';
import { type Batch, floatOutput, type RuntimeOptions } from '../models/runtime.js';
import { RuntimeCore } from '../models/runtime-core.js';

export interface EncoderCoreOptions extends RuntimeOptions {
  /** L2-normalize the vectors (default true: the index uses inner product as cosine). */
  normalize?: boolean | undefined;
}

export interface EncoderInfo extends ModelInfo {
  dim: number;
  pooling: Pooling;
}

/**
 * Contextual token vectors of several texts (the graph's last hidden state before pooling), the
 * template's special tokens left out, each vector L2-normalized: text i owns rows
 * [offsets[i], offsets[i + 1]) of `vectors` (row-major, `dim` wide), with their vocabulary ids in `ids`.
 */
export interface TokenVectors {
  dim: number;
  offsets: Int32Array;
  ids: Int32Array;
  vectors: Float32Array;
}

export function checkTexts(texts: unknown): asserts texts is string[] {
  if (!Array.isArray(texts)) throw new ParamineError('BAD_INPUT', 'texts must be an array of strings');
  texts.forEach((t, i) => {
    if (typeof t !== 'string') throw new ParamineError('BAD_INPUT', 'not a string', { field: `texts[${i}]` });
  });
}

// Graphs exported with pooling inside give a [batch, dim] output under this name.
const POOLED_OUTPUT = 'sentence_embedding';
const TOKEN_OUTPUTS = ['last_hidden_state', 'token_embeddings'];

export class EncoderCore extends RuntimeCore {
  readonly dim: number;
  readonly pooling: Pooling;
  private readonly output: string;
  private readonly pooled: boolean;
  private readonly normalize: boolean;

  private constructor(rt: ModelRuntime, opts: EncoderCoreOptions) {
    super(rt);
    this.pooling = rt.modelDir.pooling;
    this.normalize = opts.normalize ?? true;
    const names = rt.outputNames;
    const pooled = names.includes(POOLED_OUTPUT);
    const output = pooled ? POOLED_OUTPUT : (TOKEN_OUTPUTS.find((n) => names.includes(n)) ?? names[0]);
    if (output === undefined) throw new ParamineError('BAD_CONFIG', `${rt.modelDir.onnxPath} has no outputs`);
    this.output = output;
    this.pooled = pooled;
    const meta = rt.outputMetadata.find((m) => m.name === output);
    const last = meta?.isTensor ? meta.shape[meta.shape.length - 1] : undefined;
    const dim = typeof last === 'number' ? last : rt.modelDir.config.hidden_size;
    if (dim === undefined) {
      throw new ParamineError(
        'BAD_CONFIG',
        `${rt.modelDir.dir}: cannot tell the embedding size (no hidden_size)`,
        {
          field: 'config.json',
        },
      );
    }
    this.dim = dim;
  }

  static open(dir: string, opts: EncoderCoreOptions = {}): Promise<EncoderCore> {
    return RuntimeCore.openWith(dir, opts, (rt) => new EncoderCore(rt, opts));
  }

  get info(): EncoderInfo {
    return {
      dim: this.dim,
      pooling: this.pooling,
      modelId: this.modelId,
      onnxSha256: this.onnxSha256,
      onnxFile: this.onnxFile,
      maxLength: this.maxLength,
    };
  }

  async encode(texts: readonly string[]): Promise<Float32Array> {
    checkTexts(texts);
    const out = new Float32Array(texts.length * this.dim);
    if (texts.length === 0) return out;
    const tok = this.rt.tokenizer;
    const encoded = await this.rt.tokenize(texts, (t) => tok.encode(t));
    await this.rt.runAll(encoded, (batch, result) => this.pool(batch, floatOutput(result, this.output), out));
    return out;
  }

  /**
   * Token vectors (for BERTScore). A separate path from encode(), which stays as it was: graphs whose
   * only output is pooled cannot answer this.
   */
  async encodeTokens(texts: readonly string[]): Promise<TokenVectors> {
    checkTexts(texts);
    const name = TOKEN_OUTPUTS.find((n) => this.rt.outputNames.includes(n));
    if (name === undefined) {
      throw new ParamineError(
        'BAD_CONFIG',
        `${this.rt.modelDir.onnxFile} has no token-level output (${TOKEN_OUTPUTS.join(' or ')})`,
      );
    }
    const tok = this.rt.tokenizer;
    const encoded = await this.rt.tokenize(texts, (t) => tok.encode(t));
    const offsets = new Int32Array(texts.length + 1);
    const keep = encoded.map((e) => e.ids.filter((id) => !tok.isTemplateToken(id)).length);
    for (let i = 0; i < texts.length; i++) offsets[i + 1] = offsets[i]! + keep[i]!;
    const d = this.dim;
    const ids = new Int32Array(offsets[texts.length]!);
    const vectors = new Float32Array(ids.length * d);
    await this.rt.runAll(encoded, (batch, result) => {
      const t = floatOutput(result, name);
      const L = batch.length;
      batch.rows.forEach((row, k) => {
        const e = encoded[row]!;
        let at = offsets[row]!;
        for (let j = 0; j < e.ids.length; j++) {
          const id = e.ids[j]!;
          if (tok.isTemplateToken(id)) continue;
          const v = vectors.subarray(at * d, (at + 1) * d);
          v.set(t.data.subarray((k * L + j) * d, (k * L + j + 1) * d));
          l2normalize(v);
          ids[at++] = id;
        }
      });
    });
    return { dim: d, offsets, ids, vectors };
  }

  /** Vocabulary ids of each text as the encoder tokenizes it, special tokens left out (for idf counts). */
  async tokenIds(texts: readonly string[]): Promise<Int32Array[]> {
    checkTexts(texts);
    const tok = this.rt.tokenizer;
    const encoded = await this.rt.tokenize(texts, (t) => tok.encode(t));
    return encoded.map((e) => Int32Array.from(e.ids.filter((id) => !tok.isTemplateToken(id))));
  }

  /** Pools one batch's token embeddings into `out` at each row's original position. */
  private pool(batch: Batch, t: { data: Float32Array; dims: number[] }, out: Float32Array): void {
    const d = this.dim;
    const want = this.pooled ? [batch.rows.length, d] : [batch.rows.length, batch.length, d];
    if (t.dims.length !== want.length || t.dims.some((x, i) => x !== want[i])) {
      throw new ParamineError(
        'BAD_CONFIG',
        `${this.rt.modelDir.onnxFile}: output ${this.output} has shape [${t.dims}], expected [${want}]`,
      );
    }
    const L = batch.length;
    batch.rows.forEach((row, k) => {
      const v = out.subarray(row * d, (row + 1) * d);
      if (this.pooled) v.set(t.data.subarray(k * d, (k + 1) * d));
      else poolRow(t.data, batch.mask, k, L, d, this.pooling, v);
      if (this.normalize) l2normalize(v);
    });
  }
}

export function poolRow(
  h: Float32Array,
  mask: Uint8Array,
  k: number,
  L: number,
  d: number,
  mode: Pooling,
  v: Float32Array,
) {
  const base = k * L * d;
  if (mode === 'cls') {
    v.set(h.subarray(base, base + d));
    return;
  }
  v.fill(mode === 'max' ? Number.NEGATIVE_INFINITY : 0);
  let count = 0;
  for (let j = 0; j < L; j++) {
    if (mask[k * L + j] === 0) continue;
    count++;
    const off = base + j * d;
    if (mode === 'max') for (let i = 0; i < d; i++) v[i] = Math.max(v[i]!, h[off + i]!);
    else for (let i = 0; i < d; i++) v[i]! += h[off + i]!;
  }
  if (mode === 'max') return;
  // sentence-transformers clamps the token count at 1e-9; every row here has at least its special tokens.
  const div = mode === 'mean_sqrt_len' ? Math.sqrt(Math.max(count, 1e-9)) : Math.max(count, 1e-9);
  for (let i = 0; i < d; i++) v[i]! /= div;
}

export function l2normalize(v: Float32Array): void {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  // Same floor as torch.nn.functional.normalize (eps 1e-12) so a zero vector stays zero.
  const n = Math.max(Math.sqrt(s), 1e-12);
  for (let i = 0; i < v.length; i++) v[i]! /= n;
}

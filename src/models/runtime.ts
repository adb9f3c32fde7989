/**
 * The one tokenizer + ONNX Runtime wrapper behind both the Encoder and the CrossEncoder.
 *
 * onnxruntime-node's `session.run` executes on the calling thread (it only defers the native call), so this
 * runtime is meant to live in a worker thread (see worker.ts); there it tokenizes, pads length-sorted
 * batches and runs them one after another. Runs on one session are serialized: two concurrent runs would
 * fight over the same intra-op threads.
 */
import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import { sha256File } from '../durable.js';
import { ParamineError } from '../errors.js';
import { type ModelDir, type ReadModelDirOptions, readModelDir } from './dir.js';
import { int8SessionEntries } from './int8-kernels.js';

export interface RuntimeOptions extends ReadModelDirOptions {
  /** ORT intra-op threads; default: every core this process may use. */
  threads?: number | undefined;
  /** Sequences per session.run (after sorting by length). */
  batchSize?: number | undefined;
  /**
   * Let ORT's idle intra-op threads spin-wait for work (ORT's default). Off frees the cores between runs for
   * whatever else the process does; see BENCHMARKS.md for what it costs.
   */
  spinning?: boolean | undefined;
  /** Texts tokenized between two yields to the event loop. */
  tokenizeChunk?: number | undefined;
}

export interface Encoded {
  ids: Int32Array;
  typeIds: Uint8Array;
}

/** A padded batch in ORT tensors plus where each row came from. */
export interface Batch {
  rows: number[];
  /** Padded sequence length. */
  length: number;
  feeds: Record<string, ort.Tensor>;
  /** attention mask, row-major [rows.length × length], for pooling. */
  mask: Uint8Array;
}

type Ids = (number | undefined)[];

/** tokenizers.js does no truncation, so we tokenize without special tokens, truncate, then apply the template. */
export class TextTokenizer {
  readonly maxLength: number;
  readonly padId: number;
  private readonly tok: Tokenizer;
  private readonly addedIds: Map<string, number>;
  private readonly unkId: number;
  private readonly specialSingle: number;
  private readonly specialPair: number;
  /** Ids the template adds around a text ([CLS], [SEP], …) and the padding id. */
  private readonly templateIds: ReadonlySet<number>;

  constructor(md: Pick<ModelDir, 'tokenizerJson' | 'tokenizerConfig' | 'maxLength' | 'dir'>) {
    try {
      this.tok = new Tokenizer(md.tokenizerJson, md.tokenizerConfig);
    } catch (e) {
      throw new ParamineError('BAD_CONFIG', `${md.dir}/tokenizer.json: ${(e as Error).message}`, {
        field: 'tokenizer.json',
        cause: e,
      });
    }
    this.maxLength = md.maxLength;
    this.addedIds = new Map([...this.tok.get_added_tokens_decoder()].map(([id, t]) => [t.content, id]));
    this.unkId = this.tok.model?.unk_token_id ?? 0;
    const pad = md.tokenizerConfig.pad_token;
    const padName = typeof pad === 'string' ? pad : '[PAD]';
    this.padId = this.addedIds.get(padName) ?? this.tok.token_to_id(padName) ?? 0;
    this.specialSingle = this.template([], null).ids.length;
    this.specialPair = this.template([], []).ids.length;
    this.templateIds = new Set([...this.template([], null).ids, this.padId]);
  }

  /** Whether an id is one the template adds (not a piece of the text). */
  isTemplateToken(id: number): boolean {
    return this.templateIds.has(id);
  }

  private toId(t: string): number {
    return this.addedIds.get(t) ?? this.tok.token_to_id(t) ?? this.unkId;
  }

  private pieces(text: string): string[] {
    return text.length === 0 ? [] : this.tok.tokenize(text, { add_special_tokens: false });
  }

  /** Word pieces of a text, before truncation and the template (what `tokensOf` counts from). */
  pieceCount(text: string): number {
    return this.pieces(text).length;
  }

  /**
   * Tokens the model runs for a text of `a` pieces, or a pair of `a` and `b` (an empty second text is no
   * pair, as in encodePair): the template's included, cut at maxLength as encode and encodePair cut.
   */
  tokensOf(a: number, b?: number): number {
    if (b === undefined || b === 0)
      return Math.min(a, Math.max(0, this.maxLength - this.specialSingle)) + this.specialSingle;
    return Math.min(a + b, Math.max(0, this.maxLength - this.specialPair)) + this.specialPair;
  }

  private template(a: string[], b: string[] | null): Encoded {
    const pp = this.tok.post_processor;
    let tokens: string[];
    let types: Ids | undefined;
    if (pp === null) {
      tokens = b === null ? a : [...a, ...b];
    } else {
      const out = pp.post_process(a, b, true);
      tokens = out.tokens;
      types = out.token_type_ids;
    }
    const ids = new Int32Array(tokens.length);
    for (let i = 0; i < tokens.length; i++) ids[i] = this.toId(tokens[i]!);
    const typeIds = new Uint8Array(tokens.length);
    if (types !== undefined) for (let i = 0; i < types.length; i++) typeIds[i] = types[i] ?? 0;
    else if (b !== null) typeIds.fill(1, a.length);
    return { ids, typeIds };
  }

  /** One text, cut from the right to fit maxLength with its special tokens. */
  encode(text: string): Encoded {
    const p = this.pieces(text);
    const room = Math.max(0, this.maxLength - this.specialSingle);
    return this.template(p.length > room ? p.slice(0, room) : p, null);
  }

  /**
   * A text pair, truncated longest-first the way Hugging Face's tokenizers (Rust) does it: the shorter side
   * keeps what it can up to half the budget, the longer one takes the rest.
   */
  encodePair(a: string, b: string): Encoded {
    // transformers treats an empty second text as no pair at all ([CLS] a [SEP]); do the same for parity.
    if (b.length === 0) return this.encode(a);
    let pa = this.pieces(a);
    let pb = this.pieces(b);
    const budget = Math.max(0, this.maxLength - this.specialPair);
    if (pa.length + pb.length > budget) {
      const swap = pa.length > pb.length;
      let n1 = swap ? pb.length : pa.length; // shorter
      let n2: number;
      if (n1 > budget) n2 = n1;
      else n2 = Math.max(n1, budget - n1);
      if (n1 + n2 > budget) {
        n1 = Math.floor(budget / 2);
        n2 = n1 + (budget % 2);
      }
      const [na, nb] = swap ? [n2, n1] : [n1, n2];
      pa = pa.slice(0, na);
      pb = pb.slice(0, nb);
    }
    return this.template(pa, pb);
  }

  /**
   * A question and a text given as words (extractive QA, the span model): the text is cut from the right to
   * fit (the question keeps up to half the budget), and `wordOf[i]` is the word token i came from (-1 for
   * the question and template tokens). Tokenizing word by word gives the same pieces as the whole text for
   * BERT-style pre-tokenizers, which split at whitespace and punctuation anyway.
   */
  encodeQuestionWords(question: string, words: readonly string[]): Encoded & { wordOf: Int32Array } {
    const budget = Math.max(0, this.maxLength - this.specialPair);
    const pa = this.pieces(question).slice(0, Math.ceil(budget / 2));
    const pb: string[] = [];
    const from: number[] = [];
    for (let w = 0; w < words.length && pb.length < budget - pa.length; w++) {
      for (const p of this.pieces(words[w] as string)) {
        if (pb.length >= budget - pa.length) break;
        pb.push(p);
        from.push(w);
      }
    }
    const enc = this.template(pa, pb);
    const wordOf = new Int32Array(enc.ids.length).fill(-1);
    // The text's pieces are the first pb.length tokens of the second segment (type id 1).
    const first = enc.typeIds.indexOf(1);
    if (first >= 0) for (let j = 0; j < from.length; j++) wordOf[first + j] = from[j] as number;
    return { ...enc, wordOf };
  }
}

/**
 * Whether the graph quantizes its activations at run time (ORT's DynamicQuantizeLinear, what
 * `quantize_dynamic` writes). Its scale is taken over the whole input tensor, padding and the other rows
 * of a batch included, so a row's output would depend on what it is batched with (up to 0.2 of a
 * probability on MRPC): such graphs run one row at a time, which on CPU costs little (no padding).
 */
export async function hasDynamicQuantization(path: string): Promise<boolean> {
  const marker = Buffer.from('DynamicQuantizeLinear');
  const fh = await open(path, 'r');
  try {
    const chunk = Buffer.alloc(4 * 2 ** 20 + marker.length);
    let carry = 0;
    for (let at = 0; ; ) {
      const { bytesRead } = await fh.read(chunk, carry, chunk.length - carry, at);
      if (bytesRead === 0) return false;
      const filled = carry + bytesRead;
      if (chunk.subarray(0, filled).includes(marker)) return true;
      at += bytesRead;
      // Keep the tail: the name may straddle two reads.
      carry = Math.min(marker.length - 1, filled);
      chunk.copy(chunk, 0, filled - carry, filled);
    }
  } finally {
    await fh.close();
  }
}

/** A tokenizer and an ORT session over one model directory. */
export class ModelRuntime {
  readonly modelDir: ModelDir;
  readonly tokenizer: TextTokenizer;
  readonly onnxSha256: string;
  readonly batchSize: number;
  readonly tokenizeChunk: number;
  private session: ort.InferenceSession | null;
  private readonly inputTypes: Map<string, 'int64' | 'int32'>;
  /** Serializes runs on the session: a promise chain. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(md: ModelDir, sha: string, session: ort.InferenceSession, opts: RuntimeOptions) {
    this.modelDir = md;
    this.onnxSha256 = sha;
    this.session = session;
    this.tokenizer = new TextTokenizer(md);
    this.batchSize = opts.batchSize ?? 32;
    this.tokenizeChunk = opts.tokenizeChunk ?? 256;
    this.inputTypes = new Map();
    for (const m of session.inputMetadata) {
      if (!m.isTensor)
        throw new ParamineError('BAD_CONFIG', `${md.onnxPath}: input ${m.name} is not a tensor`);
      if (m.type !== 'int64' && m.type !== 'int32') {
        throw new ParamineError(
          'BAD_CONFIG',
          `${md.onnxPath}: input ${m.name} is ${m.type}, expected int64/int32`,
        );
      }
      if (!['input_ids', 'attention_mask', 'token_type_ids'].includes(m.name)) {
        throw new ParamineError('BAD_CONFIG', `${md.onnxPath}: unexpected graph input '${m.name}'`);
      }
      this.inputTypes.set(m.name, m.type);
    }
    if (!this.inputTypes.has('input_ids')) {
      throw new ParamineError('BAD_CONFIG', `${md.onnxPath}: the graph has no input_ids input`);
    }
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) {
      throw new ParamineError('BAD_CONFIG', `batchSize must be a positive integer, got ${this.batchSize}`);
    }
  }

  static async open(dir: string, opts: RuntimeOptions = {}): Promise<ModelRuntime> {
    const md = await readModelDir(dir, opts);
    const threads = opts.threads ?? availableParallelism();
    const rowWise = await hasDynamicQuantization(md.onnxPath);
    let session: ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(md.onnxPath, {
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
        extra: {
          session: {
            intra_op: { allow_spinning: opts.spinning === false ? '0' : '1' },
            ...(await int8SessionEntries(rowWise)),
          },
        },
      });
    } catch (e) {
      throw new ParamineError('BAD_CONFIG', `cannot load ${md.onnxPath}: ${(e as Error).message}`, {
        field: md.onnxFile,
        cause: e,
      });
    }
    const sha = await sha256File(md.onnxPath);
    try {
      return new ModelRuntime(md, sha, session, rowWise ? { ...opts, batchSize: 1 } : opts);
    } catch (e) {
      await session.release();
      throw e;
    }
  }

  get outputNames(): readonly string[] {
    return this.live().outputNames;
  }

  get outputMetadata(): readonly ort.InferenceSession.ValueMetadata[] {
    return this.live().outputMetadata;
  }

  private live(): ort.InferenceSession {
    if (this.session === null)
      throw new ParamineError('UNAVAILABLE', `model ${this.modelDir.name} is closed`);
    return this.session;
  }

  /** Tokenizes in chunks, yielding to the event loop between chunks. */
  async tokenize<T>(items: readonly T[], one: (item: T) => Encoded): Promise<Encoded[]> {
    const out: Encoded[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      if (i > 0 && i % this.tokenizeChunk === 0) await yieldToLoop();
      out[i] = one(items[i]!);
    }
    return out;
  }

  /** Row order: longest first, so padding within a batch is small and memory peaks early. */
  plan(encoded: readonly Encoded[], batchSize = this.batchSize): number[][] {
    const order = encoded
      .map((_, i) => i)
      .sort((a, b) => encoded[b]!.ids.length - encoded[a]!.ids.length || a - b);
    const batches: number[][] = [];
    for (let i = 0; i < order.length; i += batchSize) batches.push(order.slice(i, i + batchSize));
    return batches;
  }

  /** Pads rows into the graph's input tensors. */
  build(encoded: readonly Encoded[], rows: number[]): Batch {
    let length = 0;
    for (const r of rows) length = Math.max(length, encoded[r]!.ids.length);
    const n = rows.length * length;
    const ids = new Int32Array(n).fill(this.tokenizer.padId);
    const types = new Int32Array(n);
    const mask = new Uint8Array(n);
    rows.forEach((r, k) => {
      const e = encoded[r]!;
      ids.set(e.ids, k * length);
      types.set(e.typeIds, k * length);
      mask.fill(1, k * length, k * length + e.ids.length);
    });
    const feeds: Record<string, ort.Tensor> = {};
    const dims = [rows.length, length];
    const tensor = (type: 'int64' | 'int32', data: ArrayLike<number>) => {
      if (type === 'int32') return new ort.Tensor('int32', Int32Array.from(data), dims);
      const big = new BigInt64Array(n);
      for (let i = 0; i < n; i++) big[i] = BigInt(data[i]!);
      return new ort.Tensor('int64', big, dims);
    };
    for (const [name, type] of this.inputTypes) {
      feeds[name] = tensor(type, name === 'input_ids' ? ids : name === 'attention_mask' ? mask : types);
    }
    return { rows, length, feeds, mask };
  }

  /** One session.run, queued behind any other run on this session. */
  run(feeds: Record<string, ort.Tensor>): Promise<ort.InferenceSession.ReturnType> {
    const session = this.live();
    const next = this.queue.then(() => session.run(feeds));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Runs every row through the graph in length-sorted batches; `take` gets each batch's outputs in order. */
  async runAll(
    encoded: readonly Encoded[],
    take: (batch: Batch, out: ort.InferenceSession.ReturnType) => void,
  ): Promise<void> {
    for (const rows of this.plan(encoded)) {
      const batch = this.build(encoded, rows);
      take(batch, await this.run(batch.feeds));
    }
  }

  async close(): Promise<void> {
    const s = this.session;
    this.session = null;
    if (s !== null) {
      await this.queue;
      await s.release();
    }
  }
}

/** The float data of an output tensor with its dims, or a clear error when the graph returns something else. */
export function floatOutput(
  out: ort.InferenceSession.ReturnType,
  name: string,
): { data: Float32Array; dims: number[] } {
  const t = out[name];
  if (t === undefined || !('dims' in t) || t.type !== 'float32') {
    throw new ParamineError('BAD_CONFIG', `graph output ${name} is missing or not float32`);
  }
  return { data: t.data as Float32Array, dims: [...t.dims] };
}

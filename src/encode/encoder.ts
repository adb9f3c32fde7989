/**
 * Encoder: sentence embeddings from a model directory, computed in a worker thread so that inference never
 * blocks the caller's event loop (onnxruntime-node runs a session on the thread that calls it).
 * `{ worker: false }` runs the same core on the calling thread instead (benchmarks, one-shot scripts).
 */

import type { Pooling } from '../models/dir.js';
import { type ModelBackend, ModelHandle } from '../models/handle.js';
import type { Embedder } from '../models/ports.js';
import { TokenCount } from '../models/token-count.js';
import { ModelWorker, workerEntry } from '../models/worker.js';
import {
  checkTexts,
  EncoderCore,
  type EncoderCoreOptions,
  type EncoderInfo,
  type TokenVectors,
} from './core.js';

export interface EncoderOptions extends EncoderCoreOptions {
  /** Run in a worker thread (default true). */
  worker?: boolean | undefined;
}

interface Backend extends ModelBackend<EncoderInfo> {
  encode(texts: string[]): Promise<Float32Array>;
  encodeTokens(texts: string[]): Promise<TokenVectors>;
  tokenIds(texts: string[]): Promise<Int32Array[]>;
}

function workerBackend(w: ModelWorker<EncoderInfo>): Backend {
  return {
    info: w.info,
    encode: (texts) => w.call<Float32Array>('encode', texts),
    encodeTokens: (texts) => w.call<TokenVectors>('encodeTokens', texts),
    tokenIds: (texts) => w.call<Int32Array[]>('tokenIds', texts),
    close: () => w.close(),
  };
}

function inlineBackend(core: EncoderCore): Backend {
  return {
    info: core.info,
    encode: (texts) => core.encode(texts),
    encodeTokens: (texts) => core.encodeTokens(texts),
    tokenIds: (texts) => core.tokenIds(texts),
    close: () => core.close(),
  };
}

export class Encoder extends ModelHandle<EncoderInfo, Backend> implements Embedder {
  readonly #count: TokenCount;

  private constructor(backend: Backend, count: TokenCount) {
    super(backend);
    this.#count = count;
  }

  static async open(dir: string, opts: EncoderOptions = {}): Promise<Encoder> {
    const { worker = true, ...coreOpts } = opts;
    const count = await TokenCount.open(dir, coreOpts);
    if (!worker) return new Encoder(inlineBackend(await EncoderCore.open(dir, coreOpts)), count);
    const w = await ModelWorker.start<EncoderInfo>(workerEntry(import.meta.url), { dir, opts: coreOpts });
    return new Encoder(workerBackend(w), count);
  }

  /** Tokens the model runs for a text (counted here, on the caller's thread: batchers size by it). */
  tokens(text: string): number {
    return this.#count.text(text);
  }

  /** Embedding size. */
  get dim(): number {
    return this.backend.info.dim;
  }

  get pooling(): Pooling {
    return this.backend.info.pooling;
  }

  /** n × dim L2-normalized vectors, row i for texts[i]. */
  async encode(texts: readonly string[]): Promise<Float32Array> {
    checkTexts(texts);
    if (texts.length === 0) return new Float32Array(0);
    return this.backend.encode(texts as string[]);
  }

  /** Contextual token vectors (special tokens left out), for BERTScore; see EncoderCore.encodeTokens. */
  async encodeTokens(texts: readonly string[]): Promise<TokenVectors> {
    checkTexts(texts);
    return this.backend.encodeTokens(texts as string[]);
  }

  /** Tokenizer ids per text (special tokens left out), for document frequencies. */
  async tokenIds(texts: readonly string[]): Promise<Int32Array[]> {
    checkTexts(texts);
    return this.backend.tokenIds(texts as string[]);
  }
}

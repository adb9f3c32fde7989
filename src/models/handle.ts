/** The part Encoder and CrossEncoder share: a model backend (worker thread or inline) and what it reports. */

/** What a running model reports about the graph it runs. */
export interface ModelInfo {
  /** Directory name of the model: what an index manifest records next to `onnxSha256`. */
  modelId: string;
  /** sha256 of the ONNX graph in use. */
  onnxSha256: string;
  /** The ONNX graph used, relative to the model directory (e.g. onnx/model_quantized.onnx). */
  onnxFile: string;
  /** Tokens per input (a text, or a pair cut longest-first), special tokens included; longer ones are cut. */
  maxLength: number;
}

export interface ModelBackend<I extends ModelInfo> {
  info: I;
  close(): Promise<void>;
}

export abstract class ModelHandle<I extends ModelInfo, B extends ModelBackend<I>> {
  protected readonly backend: B;

  protected constructor(backend: B) {
    this.backend = backend;
  }

  get modelId(): string {
    return this.backend.info.modelId;
  }

  get onnxSha256(): string {
    return this.backend.info.onnxSha256;
  }

  get onnxFile(): string {
    return this.backend.info.onnxFile;
  }

  get maxLength(): number {
    return this.backend.info.maxLength;
  }

  async close(): Promise<void> {
    await this.backend.close();
  }
}

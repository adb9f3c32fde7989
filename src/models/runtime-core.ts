/** What every model core built on one ModelRuntime shares: where the model came from, and closing it. */
import { ModelRuntime, type RuntimeOptions } from './runtime.js';

export abstract class RuntimeCore {
  protected readonly rt: ModelRuntime;

  protected constructor(rt: ModelRuntime) {
    this.rt = rt;
  }

  /** Opens the runtime and builds a core on it; the runtime is closed when the core refuses the model. */
  protected static async openWith<T>(
    dir: string,
    opts: RuntimeOptions,
    make: (rt: ModelRuntime) => T,
  ): Promise<T> {
    const rt = await ModelRuntime.open(dir, opts);
    try {
      return make(rt);
    } catch (e) {
      await rt.close();
      throw e;
    }
  }

  /** Directory name of the model: what an index manifest records next to `onnxSha256`. */
  get modelId(): string {
    return this.rt.modelDir.name;
  }

  get onnxSha256(): string {
    return this.rt.onnxSha256;
  }

  /** The ONNX graph used, relative to the model directory (e.g. onnx/model_quantized.onnx). */
  get onnxFile(): string {
    return this.rt.modelDir.onnxFile;
  }

  get maxLength(): number {
    return this.rt.tokenizer.maxLength;
  }

  async close(): Promise<void> {
    await this.rt.close();
  }
}

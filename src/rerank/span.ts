/**
 * SpanModel: the sub-sentence span model (span-core.ts) in a worker thread, so inference never blocks the
 * caller's event loop. `{ worker: false }` runs it on the calling thread.
 */
import { type ModelBackend, ModelHandle } from '../models/handle.js';
import { ModelWorker, workerEntry } from '../models/worker.js';
import {
  checkSpanQueries,
  type SpanHit,
  SpanModelCore,
  type SpanModelCoreOptions,
  type SpanModelInfo,
  type SpanQuery,
} from './span-core.js';

export type { SpanHit, SpanQuery };

export interface SpanModelOptions extends SpanModelCoreOptions {
  /** Run in a worker thread (default true). */
  worker?: boolean | undefined;
}

interface Backend extends ModelBackend<SpanModelInfo> {
  find(items: SpanQuery[]): Promise<Array<SpanHit | null>>;
}

export class SpanModel extends ModelHandle<SpanModelInfo, Backend> {
  private constructor(backend: Backend) {
    super(backend);
  }

  static async open(dir: string, opts: SpanModelOptions = {}): Promise<SpanModel> {
    const { worker = true, ...coreOpts } = opts;
    if (!worker) {
      const core = await SpanModelCore.open(dir, coreOpts);
      return new SpanModel({ info: core.info, find: (q) => core.find(q), close: () => core.close() });
    }
    const w = await ModelWorker.start<SpanModelInfo>(workerEntry(import.meta.url), {
      kind: 'span',
      dir,
      opts: coreOpts,
    });
    return new SpanModel({
      info: w.info,
      find: (items) => w.call<Array<SpanHit | null>>('find', items),
      close: () => w.close(),
    });
  }

  /** Per query: the span of `text` that paraphrases `question` (character offsets), or null. */
  async find(items: readonly SpanQuery[]): Promise<Array<SpanHit | null>> {
    checkSpanQueries(items);
    if (items.length === 0) return [];
    return this.backend.find(items as SpanQuery[]);
  }
}

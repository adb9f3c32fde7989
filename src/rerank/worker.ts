/** Worker entry: one CrossEncoderCore or SpanModelCore per worker thread (see ../models/worker.ts for why). */
import { z } from 'zod';
import { modelData, serveModel } from '../models/worker.js';
import { CrossEncoderCore, type Pair } from './core.js';
import { SpanModelCore, type SpanQuery } from './span-core.js';

const Data = z.object({
  kind: z.enum(['cross-encoder', 'span']).default('cross-encoder'),
  dir: z.string(),
  opts: z.record(z.string(), z.unknown()),
});

const { kind } = Data.parse(modelData());

if (kind === 'span') {
  serveModel(
    (data) => {
      const { dir, opts } = Data.parse(data);
      return SpanModelCore.open(dir, opts);
    },
    (core) => core.info,
    { find: (core, items: SpanQuery[]) => core.find(items) },
    (core) => core.close(),
  );
} else {
  serveModel(
    (data) => {
      const { dir, opts } = Data.parse(data);
      return CrossEncoderCore.open(dir, opts);
    },
    (core) => core.info,
    { score: (core, pairs: Pair[]) => core.score(pairs) },
    (core) => core.close(),
  );
}

/** Worker entry: one CrossEncoderCore per worker thread (see ../models/worker.ts for why). */
import { z } from 'zod';
import { serveModel } from '../models/worker.js';
import { CrossEncoderCore, type Pair } from './core.js';

const Data = z.object({ dir: z.string(), opts: z.record(z.string(), z.unknown()) });

serveModel(
  (data) => {
    const { dir, opts } = Data.parse(data);
    return CrossEncoderCore.open(dir, opts);
  },
  (core) => core.info,
  { score: (core, pairs: Pair[]) => core.score(pairs) },
  (core) => core.close(),
);

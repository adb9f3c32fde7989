/** Worker entry: one EncoderCore per worker thread (see ../models/worker.ts for why). */
import { z } from 'zod';
import { serveModel } from '../models/worker.js';
import { EncoderCore } from './core.js';

const Data = z.object({ dir: z.string(), opts: z.record(z.string(), z.unknown()) });

serveModel(
  (data) => {
    const { dir, opts } = Data.parse(data);
    return EncoderCore.open(dir, opts);
  },
  (core) => core.info,
  {
    encode: (core, texts: string[]) => core.encode(texts),
    encodeTokens: (core, texts: string[]) => core.encodeTokens(texts),
    tokenIds: (core, texts: string[]) => core.tokenIds(texts),
  },
  (core) => core.close(),
);

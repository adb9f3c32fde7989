/** A counting thread (align-vectors.ts's n-gram pass): texts in, their packed gram entries out, in order. */
import { serveModel } from '../models/worker.js';
import { countGrams } from './align-grams.js';

serveModel(
  async () => null,
  () => null,
  { count: async (_, texts: string[]) => countGrams(texts) },
  async () => {},
);

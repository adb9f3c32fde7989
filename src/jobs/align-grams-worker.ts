/** A counting thread (align-vectors.ts's n-gram pass): texts in, their packed gram entries out, in order. */
import { type CountedGrams, countGrams } from './align-grams.js';
import { serveInOrder } from './align-thread.js';

serveInOrder((texts: string[]) => {
  const value: CountedGrams = countGrams(texts);
  return { value, transfer: [value.entries.buffer, value.ends.buffer] };
});

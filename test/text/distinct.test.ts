/** DistinctTexts: what the benchmarks' corpora keep, as the indexer would (normalized, once per dedup key). */
import t from 'tap';
import { DistinctTexts } from '../../src/text/index.js';

t.test('keeps each dedup key once, normalized, in the order offered; empty keys never', async (t) => {
  const d = new DistinctTexts();
  t.same(
    ['The cat  sat.', 'the CAT sat', '...', 'A dog.', 'The cat sat!'].map((x) => d.add(x)),
    [true, false, false, true, false],
  );
  t.same(d.texts, ['The cat sat.', 'A dog.']);
});

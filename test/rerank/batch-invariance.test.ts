/**
 * A pair's label and probability do not depend on what it is scored with. The committed cross-encoders are
 * int8 graphs that quantize activations at run time (DynamicQuantizeLinear: one scale over the whole input
 * tensor, padding and other rows included); batched, a pair's probability moved by up to 0.2 with its batch
 * (MRPC held-out accuracy 80.1 through paramine vs 81.4 scoring pairs one at a time). Such graphs now run
 * row by row: the default cross-encoder (real, committed) gives each pair the same scores alone and among
 * others, in any order.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { CrossEncoder } from '../../src/rerank/index.js';
import { DEFAULT_RERANKER } from '../../src/service/index.js';

const dir = join('models', DEFAULT_RERANKER);

t.test(
  'the default cross-encoder scores a pair the same alone and in any batch',
  { skip: !existsSync(join(dir, 'model.onnx')) && 'no default cross-encoder' },
  async (t) => {
    const ce = await CrossEncoder.open(dir, { worker: false });
    t.teardown(() => ce.close());
    const pairs: Array<[string, string]> = [
      [
        'The company also earned 14 cents a share a year earlier.',
        'A year ago, the company posted a profit of 12 cents a share.',
      ],
      [
        'A gentle answer turns away wrath.',
        'A soft answer turns away anger, but a harsh word stirs up wrath.',
      ],
      ['Cole Cassidy is not a bad name tbh', 'what kind of name is Cole Cassidy'],
      [
        'The vote was delayed.',
        'The committee postponed the vote on the new city budget until next week, citing missing figures.',
      ],
      ['ok', 'The river flooded the old mill after three days of heavy rain in the valley.'],
    ];
    const together = await ce.score(pairs);
    const reversed = (await ce.score([...pairs].reverse())).reverse();
    for (const [i, p] of pairs.entries()) {
      const [alone] = await ce.score([p]);
      const want = alone?.probabilities ?? {};
      for (const [label, prob] of Object.entries(want)) {
        t.ok(
          Math.abs((together[i]?.probabilities[label] ?? -1) - prob) < 1e-6,
          `pair ${i} ${label}: batched = alone`,
        );
        t.ok(
          Math.abs((reversed[i]?.probabilities[label] ?? -1) - prob) < 1e-6,
          `pair ${i} ${label}: any order`,
        );
      }
      t.equal(together[i]?.label, alone?.label);
    }
    // Its pairs dealt out among two single-threaded workers: the same scores, in the caller's order.
    const pooled = await CrossEncoder.open(dir, { workers: 2, threads: 2 });
    t.teardown(() => pooled.close());
    t.same(await pooled.score(pairs), together, 'two workers: same scores, same order');
    t.same(await pooled.score(pairs.slice(0, 1)), together.slice(0, 1), 'one pair');
  },
);

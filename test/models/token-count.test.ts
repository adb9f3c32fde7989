/**
 * The batchers' unit is the model's own token count: TokenCount agrees with what the runtime feeds the
 * graph (encode / encodePair, truncation and special tokens included), and a real Encoder / CrossEncoder
 * behind a batcher is charged by it, not by characters.
 */
import t from 'tap';
import { Encoder } from '../../src/encode/index.js';
import { readModelDir } from '../../src/models/dir.js';
import { TextTokenizer } from '../../src/models/runtime.js';
import { TokenCount } from '../../src/models/token-count.js';
import { CrossEncoder } from '../../src/rerank/index.js';
import { BatchedEmbedder, BatchedScorer } from '../../src/service/batched.js';

const TEXTS = [
  '',
  'Hello world.',
  'The 3,141,592 results at https://example.org/a/b?c=d were re-indexed overnight.',
  'Ein Übersetzungsfehler führte zu Verwirrung über die Zuständigkeiten.',
  'word '.repeat(200),
];

for (const dir of ['test/fixtures/tiny-encoder', 'test/fixtures/tiny-turku']) {
  t.test(`${dir}: counts equal the tokens the runtime feeds the graph`, async (t) => {
    const md = await readModelDir(dir);
    const tok = new TextTokenizer(md);
    const count = new TokenCount(tok);
    for (const a of TEXTS) {
      t.equal(count.text(a), tok.encode(a).ids.length, `text of ${a.length} chars`);
      for (const b of TEXTS) {
        t.equal(
          count.pair([a, b]),
          tok.encodePair(a, b).ids.length,
          `pair of ${a.length} + ${b.length} chars`,
        );
      }
    }
    t.equal(count.text(TEXTS[4] as string), md.maxLength, 'a long text is cut at the model maximum');
    t.equal(count.text(TEXTS[4] as string), count.text(TEXTS[4] as string), 'a kept count is the same');
  });
}

t.test('the batchers charge a real model its own token counts', async (t) => {
  const encoder = await Encoder.open('test/fixtures/tiny-encoder', { threads: 1 });
  const scorer = await CrossEncoder.open('test/fixtures/tiny-turku', { threads: 1 });
  t.teardown(async () => {
    await encoder.close();
    await scorer.close();
  });
  const long = 'word '.repeat(200);
  // 1,000 characters: 252 tokens by the old estimate, the model's 48 by its tokenizer.
  t.equal(encoder.tokens(long), 48, 'the encoder counts a long text at its maximum length');
  t.equal(scorer.tokens([long, long]), 48, 'the cross-encoder cuts a pair to its maximum length');
  t.ok(
    encoder.tokens('3,141,592') > 2 + Math.ceil('3,141,592'.length / 4),
    'digits cost more than 4 chars a token',
  );
  const sizes: number[] = [];
  const opts = {
    maxBatch: 64,
    maxWaitMs: 20,
    maxQueue: 100,
    maxBatchCost: 96,
    onBatch: (n: number) => sizes.push(n),
  };
  const e = new BatchedEmbedder(encoder, opts).port();
  // Two long texts fit 96 tokens (48 each) where the character estimate (252 each) sent them alone.
  await Promise.all([e.encode([long]), e.encode([long]), e.encode([long])]);
  t.same(sizes, [2, 1], 'batches cut at the counted cost');
  sizes.length = 0;
  const s = new BatchedScorer(scorer, opts).port();
  await Promise.all([s.score([[long, 'a']]), s.score([[long, 'b']]), s.score([[long, 'c']])]);
  t.same(sizes, [2, 1], 'pair batches cut at the counted cost');
});

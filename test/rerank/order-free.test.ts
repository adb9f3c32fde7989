/**
 * A pair's score does not depend on which sentence comes first: the cross-encoder reads a pair in its
 * model's canonical order (config.json `paramine.pair_order`), so P(a, b) = P(b, a) exactly, alone and in
 * the cascade, and a mining job emits each pair with the lower id first.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { CrossEncoder, canonicalPair, openLabeler } from '../../src/rerank/index.js';
import { DEFAULT_RERANKER } from '../../src/service/index.js';
import { HAS_RERANKER } from '../helpers/service.js';

const texts = readFileSync(new URL('../../examples/demo-corpus.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => (JSON.parse(l) as { text: string }).text);

/** 1,000 pairs: neighbours in the corpus (the verse and its other translation lie close) and random ones. */
function pairs(n: number): Array<readonly [string, string]> {
  let seed = 1234;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  return Array.from({ length: n }, (_, i) => {
    const a = Math.floor(rand() * texts.length);
    const b = i % 2 === 0 ? Math.min(texts.length - 1, a + 1) : Math.floor(rand() * texts.length);
    return [texts[a] as string, texts[b] as string] as const;
  });
}

t.test('canonicalPair: one order for (a, b) and (b, a)', async (t) => {
  t.same(canonicalPair(['a long one', 'short']), ['short', 'a long one']);
  t.same(canonicalPair(['short', 'a long one']), ['short', 'a long one']);
  t.same(canonicalPair(['short', 'a long one'], 'longer-first'), ['a long one', 'short']);
  // Equal lengths: code-unit order, either way round.
  t.same(canonicalPair(['bbb', 'aaa']), ['aaa', 'bbb']);
  t.same(canonicalPair(['aaa', 'bbb'], 'longer-first'), ['aaa', 'bbb']);
});

t.test(
  'P(a, b) = P(b, a) for 1,000 pairs, the student alone and the cascade',
  { skip: !HAS_RERANKER },
  async (t) => {
    const list = pairs(1000);
    const swapped = list.map(([a, b]) => [b, a] as const);
    const ce = await CrossEncoder.open(`models/${DEFAULT_RERANKER}`);
    t.teardown(() => ce.close());
    const [x, y] = [await ce.score(list), await ce.score(swapped)];
    const diff = Math.max(
      ...x.map((s, i) => Math.abs(s.probabilities.paraphrase! - y[i]!.probabilities.paraphrase!)),
    );
    t.equal(diff, 0, 'max |P(a, b) - P(b, a)| over 1,000 pairs');
    t.ok(
      x.every((s, i) => s.label === y[i]?.label),
      'the same labels',
    );

    const { labeler, close } = await openLabeler(`models/${DEFAULT_RERANKER}`);
    t.teardown(close);
    const some = list.slice(0, 200);
    const [c1, c2] = [await labeler.score(some), await labeler.score(some.map(([a, b]) => [b, a] as const))];
    t.ok(
      c1.every(
        (s, i) => s.probabilities.paraphrase === c2[i]?.probabilities.paraphrase && s.model === c2[i]?.model,
      ),
      'balanced: the same P and the same labeling model both ways',
    );
    t.ok(new Set(c1.map((s) => s.model)).size === 2, 'the cascade sent some of the 200 to the teacher');
  },
);

import t from 'tap';
import { BatchingEncoder } from '../src/search/batcher.js';

// A deterministic inner embedder: vector i = [len(text), call number]. It tests the batcher's
// grouping and splitting; the real encoder has its own tests.
function recorder() {
  const calls: string[][] = [];
  return {
    calls,
    inner: {
      dim: 2,
      async encode(texts: string[]) {
        calls.push(texts);
        await new Promise((r) => setTimeout(r, 5));
        return Float32Array.from(texts.flatMap((s) => [s.length, calls.length]));
      },
    },
  };
}

t.test('concurrent requests are encoded together and each gets its own rows back', async (t) => {
  const { calls, inner } = recorder();
  const sizes: number[] = [];
  const b = new BatchingEncoder(inner, { maxBatch: 64, maxWaitMs: 20, onBatch: (n) => sizes.push(n) });
  const texts = ['a', 'bb', 'ccc', 'dddd', 'eeeee'];
  const out = await Promise.all(texts.map((s) => b.encode([s])));
  t.equal(calls.length, 1, 'one encoder call for five concurrent requests');
  t.same(sizes, [5]);
  t.same(
    out.map((v) => [...v]),
    texts.map((s) => [s.length, 1]),
  );
});

t.test('batches are bounded; a request is never split; later requests wait their turn', async (t) => {
  const { calls, inner } = recorder();
  const b = new BatchingEncoder(inner, { maxBatch: 4, maxWaitMs: 50 });
  const reqs = [['a', 'b', 'c'], ['d', 'e'], ['f'], ['g', 'h', 'i', 'j', 'k']];
  const out = await Promise.all(reqs.map((r) => b.encode(r)));
  t.same(calls, [
    ['a', 'b', 'c'],
    ['d', 'e', 'f'],
    ['g', 'h', 'i', 'j', 'k'],
  ]);
  t.same(
    out.map((v) => v.length / 2),
    [3, 2, 1, 5],
  );
  t.same([...(out[2] as Float32Array)], [1, 2], 'request 3 rode in the second call');
});

t.test('an encoder failure rejects every request of that batch, and the next batch still runs', async (t) => {
  let fail = true;
  const b = new BatchingEncoder(
    {
      dim: 1,
      async encode(texts: string[]) {
        if (fail) {
          fail = false;
          throw new Error('boom');
        }
        return new Float32Array(texts.length);
      },
    },
    { maxBatch: 8, maxWaitMs: 5 },
  );
  const r = await Promise.allSettled([b.encode(['x']), b.encode(['y'])]);
  t.same(
    r.map((x) => x.status),
    ['rejected', 'rejected'],
  );
  t.equal((await b.encode(['z'])).length, 1);
});

import t from 'tap';
import { BatchedEmbedder, BatchedScorer } from '../../src/service/batched.js';
import { ALWAYS_ADMITTED, Batcher, type BatcherOptions } from '../../src/service/batcher.js';

// A deterministic inner model: output i = [len(item), call number]. It tests the batcher's grouping,
// splitting, bound and abort handling; the real models have their own tests.
function recorder(ms = 5) {
  const calls: string[][] = [];
  return {
    calls,
    inner: {
      dim: 2,
      async encode(texts: readonly string[]) {
        calls.push([...texts]);
        await new Promise((r) => setTimeout(r, ms));
        return Float32Array.from(texts.flatMap((s) => [s.length, calls.length]));
      },
    },
  };
}

const opts = (o: Partial<BatcherOptions>) => ({ maxBatch: 64, maxWaitMs: 20, maxQueue: Infinity, ...o });

t.test('concurrent requests are encoded together and each gets its own rows back', async (t) => {
  const { calls, inner } = recorder();
  const sizes: number[] = [];
  const b = new BatchedEmbedder(inner, opts({ onBatch: (n) => sizes.push(n) })).port();
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
  const b = new BatchedEmbedder(inner, opts({ maxBatch: 4, maxWaitMs: 50 })).port();
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

t.test('a model failure rejects every request of that batch, and the next batch still runs', async (t) => {
  let fail = true;
  const b = new Batcher<string, number>(
    async (items) => {
      if (fail) {
        fail = false;
        throw new Error('boom');
      }
      return items.map((s) => s.length);
    },
    { name: 'test', maxBatch: 8, maxWaitMs: 5, maxQueue: Infinity },
  );
  const r = await Promise.allSettled([b.submit(['x']), b.submit(['y'])]);
  t.same(
    r.map((x) => x.status),
    ['rejected', 'rejected'],
  );
  t.same(await b.submit(['zz']), [2]);
});

t.test('a full queue refuses at once with OVERLOADED and a retry time; unbounded callers wait', async (t) => {
  const calls: number[] = [];
  let rejected = 0;
  // The model holds its first batch until released: a refusal that arrives before that did not wait.
  let release = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  const b = new Batcher<number, number>(
    async (items) => {
      calls.push(items.length);
      if (calls.length === 1) await held;
      return items.map((x) => x * 2);
    },
    { name: 'test', maxBatch: 2, maxWaitMs: 0, maxQueue: 3, onRejected: () => rejected++ },
  );
  const running = b.submit([1, 2]); // taken at once: the queue is empty again
  const queued = [b.submit([3, 4]), b.submit([5])];
  t.equal(b.depth, 3);
  await t.rejects(b.submit([6]), { code: 'OVERLOADED', status: 503 });
  t.same(calls, [2], 'refused without waiting: the first batch is still in the model');
  try {
    await b.submit([7]);
  } catch (e) {
    const s = (e as { retryAfterSeconds?: number }).retryAfterSeconds;
    t.ok(s !== undefined && s >= 1 && s <= 60, `retry after ${s} s`);
  }
  t.equal(rejected, 2);
  t.equal(b.depth, 3, 'refused requests take no room');
  const bulk = b.submit([8, 9], { unbounded: true });
  release();
  t.same(await Promise.all([running, ...queued, bulk]), [[2, 4], [6, 8], [10], [16, 18]]);
  t.same(await b.submit([10, 11, 12, 13]), [20, 22, 24, 26], 'an empty queue takes a request bigger than it');
});

t.test('a request aborted while queued never reaches the model', async (t) => {
  const seen: number[] = [];
  let dropped = 0;
  const b = new Batcher<number, number>(
    async (items) => {
      seen.push(...items);
      await new Promise((r) => setTimeout(r, 30));
      return items;
    },
    { name: 'test', maxBatch: 1, maxWaitMs: 0, maxQueue: 10, onDropped: (n) => (dropped += n) },
  );
  const first = b.submit([1]);
  const gone = new AbortController();
  const abandoned = b.submit([2], { signal: gone.signal });
  const kept = b.submit([3]);
  gone.abort();
  await t.rejects(abandoned, { code: 'ABORTED' });
  t.same(await Promise.all([first, kept]), [[1], [3]]);
  t.same(seen, [1, 3], 'the model never saw the abandoned item');
  t.equal(dropped, 1);
  t.equal(b.depth, 0);
  await t.rejects(b.submit([4], { signal: AbortSignal.abort() }), { code: 'ABORTED' });
});

t.test(
  'bulk work is cut into batches, takes no room in the bound and yields to interactive requests',
  async (t) => {
    const calls: number[][] = [];
    const b = new Batcher<number, number>(
      async (items) => {
        calls.push(items);
        await new Promise((r) => setTimeout(r, 10));
        return items.map((x) => -x);
      },
      { name: 'test', maxBatch: 2, maxWaitMs: 0, maxQueue: 1 },
    );
    const bulk = b.submit([1, 2, 3, 4, 5], { unbounded: true });
    t.equal(b.depth, 3, 'the first chunk runs, the rest wait');
    const query = b.submit([10]);
    t.same(await Promise.all([bulk, query]), [[-1, -2, -3, -4, -5], [-10]]);
    t.same(calls, [[1, 2], [10], [3, 4], [5]], 'the query ran before the rest of the bulk work');
  },
);

t.test('the batched scorer keeps the model calibration, labels and positive labels', async (t) => {
  const calibration = { w_logit: 0.5, w_cosine: 1.5, bias: -1 };
  const inner = {
    labels: ['not_paraphrase', 'paraphrase'],
    positiveLabels: ['paraphrase'],
    calibration,
    async score(pairs: ReadonlyArray<readonly [string, string]>) {
      return pairs.map(() => ({
        label: 'paraphrase',
        probabilities: { not_paraphrase: 0.2, paraphrase: 0.8 },
      }));
    },
  };
  const scorer = new BatchedScorer(inner, opts({}));
  for (const port of [scorer.port(), scorer.port(true)]) {
    t.same(port.calibration, calibration, 'calibration passed through');
    t.same(port.positiveLabels, ['paraphrase']);
    t.same(await port.score([['a', 'b']]), [
      { label: 'paraphrase', probabilities: { not_paraphrase: 0.2, paraphrase: 0.8 } },
    ]);
  }
});

t.test('admission by predicted wait: refused at once when the work ahead exceeds the budget', async (t) => {
  const b = new Batcher<number, number>(
    async (items) => {
      await new Promise((r) => setTimeout(r, 50 * items.length)); // 20 items/s
      return items;
    },
    { name: 'test', maxBatch: 1, maxWaitMs: 0, maxQueue: Number.POSITIVE_INFINITY, waitBudgetMs: 120 },
  );
  t.equal(b.predictedWaitMs(5), 0, 'no prediction before a batch has run');
  await b.submit([0]); // the rate is measured on this one
  const running = b.submit([1]); // in the model now: 50 ms of work ahead of the next
  // 100, 150 and 200 ms predicted: over the 120 ms budget from the second, but a few requests may always wait.
  const admitted = [b.submit([2]), b.submit([3]), b.submit([4])];
  t.equal(ALWAYS_ADMITTED, 3);
  const started = performance.now();
  await t.rejects(b.submit([5]), { code: 'OVERLOADED' }, '250 ms ahead, behind 3 waiting: refused');
  t.ok(performance.now() - started < 20, 'the refusal did not wait');
  t.same(await Promise.all([running, ...admitted]), [[1], [2], [3], [4]]);
  t.same(await b.submit([7]), [7], 'admitted again once the queue drained');
});

t.test('batches are cut by padded cost (tokens), not only by count', async (t) => {
  const calls: string[][] = [];
  const b = new Batcher<string, number>(
    async (items) => {
      calls.push([...items]);
      return items.map((s) => s.length);
    },
    { name: 'test', maxBatch: 64, maxWaitMs: 20, maxQueue: 100, cost: (s) => s.length, maxBatchCost: 10 },
  );
  const long = 'x'.repeat(10);
  await Promise.all([b.submit(['aa']), b.submit(['bb']), b.submit([long]), b.submit(['cc'])]);
  t.same(calls, [['aa', 'bb'], [long], ['cc']], 'the long text goes alone; short ones are not padded to it');
});

t.test(
  'a held place counts as queued: requests admitted together cannot overfill the queue, and one admitted is not refused later',
  async (t) => {
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const calls: number[] = [];
    const b = new Batcher<number, number>(
      async (items) => {
        calls.push(items.length);
        if (calls.length === 1) await held;
        return items.map((x) => x * 2);
      },
      { name: 'test', maxBatch: 8, maxWaitMs: 0, maxQueue: 4 },
    );
    const running = b.submit([1]); // in the model: what follows waits
    // Two searches admitted before either has its pairs (they are still encoding): 2 + 2 places held.
    const first = b.reserve(2);
    const second = b.reserve(2);
    t.throws(() => b.reserve(1), { code: 'OVERLOADED' }, 'a fifth item would overfill the queue of 4');
    await t.rejects(b.submit([9]), { code: 'OVERLOADED' }, 'so would a request without a place');
    // A request submitted under its place is admitted, even with fewer items than it held.
    const a = b.submit([3], { reservation: first });
    t.notOk(first.release(), 'the submit used the place');
    t.equal(b.depth, 1);
    t.throws(() => b.reserve(2), { code: 'OVERLOADED' }, '1 queued + 2 held + 2 > 4');
    t.ok(second.release(), 'a search that ends without reranking gives its place back');
    t.notOk(second.release(), 'once');
    const c = b.submit([4, 5, 6]);
    release();
    t.same(await Promise.all([running, a, c]), [[2], [6], [8, 10, 12]]);
  },
);

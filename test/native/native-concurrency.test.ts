import { monitorEventLoopDelay } from 'node:perf_hooks';
import t from 'tap';
import { createIndex } from '../../src/native/index.js';
import { clusteredDataset, denseIds } from '../../src/testing/index.js';

const dim = 384;
const n = 40_000;
const { corpus, queries } = clusteredDataset(n, 200, dim, { seed: 21 });
const ids = denseIds(n);

t.test('600 concurrent searches complete while the event loop stays responsive', async (t) => {
  const index = createIndex('Flat', dim, 'ip');
  await index.add(corpus, ids);
  const one = (i: number) => queries.subarray(i * dim, (i + 1) * dim);

  // Reference answers, one search at a time.
  const expected: bigint[] = [];
  for (let i = 0; i < 200; i++) expected.push((await index.search(one(i), 1)).ids[0]!);

  const histogram = monitorEventLoopDelay({ resolution: 5 });
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  histogram.enable();
  const start = performance.now();
  // Each query three times: with SIMD distance kernels 200 searches no longer add up to 250 ms.
  const rounds = 3;
  const results = await Promise.all(
    Array.from({ length: 200 * rounds }, (_, i) => index.search(one(i % 200), 10)),
  );
  const elapsed = performance.now() - start;
  histogram.disable();
  clearInterval(timer);

  results.forEach((r, i) => {
    if (r.ids[0] !== expected[i % 200]) t.fail(`search ${i}: ${r.ids[0]} instead of ${expected[i % 200]}`);
  });
  t.equal(results.length, 200 * rounds, 'all searches completed with the sequential answers');
  const maxMs = histogram.max / 1e6;
  const p99Ms = histogram.percentile(99) / 1e6;
  t.comment(
    `${200 * rounds} searches in ${elapsed.toFixed(0)} ms; loop delay p99 ${p99Ms.toFixed(1)} ms, max ${maxMs.toFixed(1)} ms`,
  );
  // The searches take long enough together that running them on the loop would block it for >= 250 ms.
  t.ok(elapsed > 250, `the work is substantial (${elapsed.toFixed(0)} ms)`);
  t.ok(maxMs < Math.min(150, elapsed / 2), `loop never blocked long (max delay ${maxMs.toFixed(1)} ms)`);
  // A loaded 2-core machine fires timers late (the max delay above is the bound that matters): 1 in 10.
  t.ok(ticks >= elapsed / 5 / 10, `a 5 ms timer kept firing (${ticks} ticks in ${elapsed.toFixed(0)} ms)`);
  await index.close();
});

t.test('adds and searches interleaved on one index: no crash, valid ids, every vector counted', async (t) => {
  const template = createIndex('IVF64,Flat', dim, 'ip');
  await template.train(corpus.subarray(0, 10_000 * dim));
  const index = await template.cloneEmpty();
  const batch = 4_000;
  const ops: Promise<unknown>[] = [];
  const seen: number[] = [];
  for (let b = 0; b < n / batch; b++) {
    ops.push(
      index.add(
        corpus.subarray(b * batch * dim, (b + 1) * batch * dim),
        ids.subarray(b * batch, (b + 1) * batch),
      ),
    );
    for (let s = 0; s < 5; s++) {
      ops.push(
        index.search(queries.subarray(0, 20 * dim), 5, { nprobe: 64 }).then((r) => {
          let max = -1;
          for (const id of r.ids) max = Math.max(max, Number(id));
          seen.push(max);
        }),
      );
    }
  }
  await Promise.all(ops);
  t.equal(index.ntotal, n);
  t.ok(
    seen.every((m) => m < n),
    'every id returned was added',
  );
  const final = await index.search(queries.subarray(0, dim), 1, { nprobe: 64 });
  t.ok(final.ids[0]! >= 0n);
  await Promise.all([template.close(), index.close()]);
});

t.test('close waits for accepted searches and rejects later ones', async (t) => {
  const index = createIndex('Flat', dim, 'ip');
  await index.add(corpus.subarray(0, 20_000 * dim), ids.subarray(0, 20_000));
  const accepted = Array.from({ length: 50 }, (_, i) =>
    index.search(queries.subarray(i * dim, (i + 1) * dim), 3),
  );
  const closed = index.close();
  const late = index.search(queries.subarray(0, dim), 3);
  await t.rejects(late, { code: 'INDEX_CLOSED' });
  const settled = await Promise.allSettled(accepted);
  t.ok(
    settled.every((s) => s.status === 'fulfilled' && s.value.ids.length === 3),
    'all 50 accepted searches resolved',
  );
  await closed;
  t.equal(index.closed, true);
  t.equal(index.ntotal, 0, 'memory released');
});

t.test('concurrent merges in opposite directions do not deadlock', async (t) => {
  const template = createIndex('Flat', dim, 'ip');
  const [a, b] = await Promise.all([template.cloneEmpty(), template.cloneEmpty()]);
  await a.add(corpus.subarray(0, 100 * dim), ids.subarray(0, 100));
  await b.add(corpus.subarray(100 * dim, 200 * dim), ids.subarray(100, 200));
  await Promise.all([a.merge(b), b.merge(a), a.merge(b)]);
  t.equal(a.ntotal + b.ntotal, 200, 'no vector lost or duplicated');
  await Promise.all([template.close(), a.close(), b.close()]);
});

t.test('a search with other nprobe waits for the searches running, not for later ones', async (t) => {
  const index = createIndex('IVF64,Flat', dim, 'ip');
  await index.train(corpus.subarray(0, 10_000 * dim));
  await index.add(corpus, ids);
  const batch = queries.subarray(0, 4 * dim);
  // A steady stream of nprobe-64 searches, four in flight at any time, for as long as the test needs.
  let issued = 0;
  let stop = false;
  const doneAt: number[] = []; // issue number of each stream search, in completion order
  const stream = async () => {
    while (!stop) {
      const me = issued++;
      await index.search(batch, 10, { nprobe: 64 });
      doneAt.push(me);
    }
  };
  const workers = Array.from({ length: 4 }, stream);
  while (issued < 24) await new Promise((r) => setTimeout(r, 5));
  const issuedBefore = issued;
  const completedBefore = doneAt.length;
  await index.search(queries.subarray(0, dim), 10, { nprobe: 1 });
  const overtook = doneAt.slice(completedBefore).filter((i) => i >= issuedBefore).length;
  stop = true;
  await Promise.all(workers);
  t.ok(issuedBefore > 4, `the stream was running (${issuedBefore} searches issued)`);
  t.ok(
    overtook <= 4,
    `${overtook} stream searches issued after it finished before it (at most one per worker)`,
  );
  await index.close();
});

/**
 * Tuning against exact ground truth on 50k seeded clustered 384-d vectors in IVF256_HNSW32,PQ48np
 * (refined from vectors.f16): the streaming brute force is exact, the operating points form a Pareto
 * front, and the defaults tuning picks reach the target recall on a second, independent query sample.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  exactTopK,
  heldOutIds,
  paretoFront,
  planForFactory,
  readManifest,
  recallOf,
  ShardedIndex,
  tuneIndex,
  tuneIndexDir,
  VectorFile,
} from '../../src/index/index.js';
import { bruteForceTopK, clusteredDataset, denseIds, writeVectorIndex } from '../../src/testing/index.js';

const n = 50_000;
const dim = 384;
const k = 10;
const dir = mkdtempSync(join(tmpdir(), 'paramine-tune-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('streaming brute force: exact, own id left out, any batch size', async (t) => {
  const { corpus } = clusteredDataset(3000, 1, 32, { seed: 3 });
  const out = join(dir, 'small');
  const plan = planForFactory('IVF16,PQ8np', { n: 3000, dim: 32, vectorsKept: true });
  await writeVectorIndex(out, corpus, plan);
  const source = (await VectorFile.open(out)) as VectorFile;
  const ids = heldOutIds(3000, 20, 1);
  const queries = await source.readIds(ids);
  const got = await exactTopK(source, queries, k, 'ip', { excludeIds: ids, batchRows: 700 });
  // Reference: brute force in JS over the same (half-float) vectors, k + 1 deep, own id dropped.
  const all = await source.read(0, 3000);
  const ref = bruteForceTopK(all, denseIds(3000), queries, 32, k + 1, 'ip');
  const want = ids.flatMap((id, q) =>
    Array.from(ref.ids.subarray(q * (k + 1), (q + 1) * (k + 1)))
      .filter((x) => x !== BigInt(id))
      .slice(0, k),
  );
  t.same(Array.from(got), want, 'same neighbours as brute force in JS, batches of 700 rows');
  t.notOk(
    ids.some((id, q) => got.subarray(q * k, (q + 1) * k).includes(BigInt(id))),
    'no query is its own neighbour',
  );
  const index = await ShardedIndex.open(out);
  // A deep re-score (k * kFactor = 3000: every row) is one shard search of 3000, not 3000 * kFactor.
  const deep = await index.search(queries, k + 1, { nprobe: 16, kFactor: 300 });
  t.same(Array.from(deep.ids), Array.from(ref.ids), 'kFactor 300 re-scores every row: brute force');
  await t.rejects(index.search(queries, k, { recall: 0.9 }), {
    code: 'BAD_INPUT',
    field: 'recall',
    message: /no measured operating points.*paramine tune/,
  });
  await index.close();
  await source.close();
});

t.test('Pareto front: cheapest first, each point more accurate than the cheaper ones', async (t) => {
  const p = (p50Ms: number, recall: number) => ({ nprobe: 1, kFactor: 1, recall, p50Ms, p99Ms: p50Ms });
  const front = paretoFront([p(1, 0.5), p(2, 0.4), p(3, 0.9), p(2.5, 0.9), p(4, 0.95), p(0.5, 0.2)]);
  t.same(
    front.map((x) => [x.p50Ms, x.recall]),
    [
      [0.5, 0.2],
      [1, 0.5],
      [2.5, 0.9],
      [4, 0.95],
    ],
  );
});

t.test('tuned defaults reach the target recall on an independent query sample', async (t) => {
  const { corpus } = clusteredDataset(n, 1, dim, { seed: 11 });
  const out = join(dir, 'hnsw');
  const plan = planForFactory('IVF256_HNSW32,PQ48np', { n, dim, vectorsKept: true });
  await writeVectorIndex(out, corpus, plan);
  const target = 0.95;
  const result = await tuneIndexDir(out, {
    queries: 1000,
    targetRecall: target,
    latencyQueries: 60,
    seed: 5,
    kFactors: [1, 2, 4, 8, 16],
    efFactors: [1, 4],
  });
  const m = await readManifest(out);
  t.comment(
    `${result.tuning.settings} settings in ${(result.tuning.ms / 1000).toFixed(1)} s; front: ` +
      result.front.map((p) => `${p.nprobe}/${p.efSearch}/${p.kFactor}: ${p.recall} ${p.p50Ms} ms`).join(', '),
  );
  t.ok(result.tuning.reached, 'some setting reaches 0.95');
  // The full sweep walks every series to saturation: more settings for the same target.
  const [fi, fv] = [await ShardedIndex.open(out), (await VectorFile.open(out)) as VectorFile];
  const fullSweep = await tuneIndex(fi, fv, {
    ...{ queries: 1000, targetRecall: target, latencyQueries: 60, seed: 5 },
    ...{ kFactors: [1, 2, 4, 8, 16], efFactors: [1, 4], sweep: 'full' as const },
  });
  await fi.close();
  await fv.close();
  t.ok(
    result.tuning.settings < fullSweep.tuning.settings,
    `target sweep ${result.tuning.settings} settings, full ${fullSweep.tuning.settings}`,
  );
  t.ok(
    fullSweep.chosen.recall >= target && result.chosen.recall >= target,
    'both choose a point past the target',
  );
  t.same(m.operatingPoints, result.front, 'the front is in the manifest');
  const points = m.operatingPoints ?? [];
  // How many points make the front depends on measured latencies (a loaded machine merges some).
  t.ok(points.length >= 2, `${points.length} operating points`);
  for (let i = 1; i < points.length; i++) {
    t.ok(points[i]!.p50Ms >= points[i - 1]!.p50Ms && points[i]!.recall > points[i - 1]!.recall, `point ${i}`);
  }
  t.ok(
    result.measured.some((p) => p.recall < target),
    'settings below the target were measured: the choice matters',
  );
  t.match(m.search, { nprobe: result.chosen.nprobe, kFactor: result.chosen.kFactor, refine: 'vectors' });
  t.equal(m.search.efSearch, result.chosen.efSearch);
  t.ok(result.chosen.recall >= target, `chosen recall ${result.chosen.recall} on the tuning sample`);

  // A second sample, disjoint from the first, searched with the defaults alone.
  const first = new Set(heldOutIds(n, 1000, 5));
  const second = heldOutIds(n, 1000, 99, first);
  t.equal(second.length, 1000);
  t.notOk(
    second.some((id) => first.has(id)),
    'independent: no query of the tuning sample',
  );
  const source = (await VectorFile.open(out)) as VectorFile;
  const index = await ShardedIndex.open(out);
  const queries = await source.readIds(second);
  const exact = await exactTopK(source, queries, k, 'ip', { excludeIds: second });
  const r = await index.search(queries, k + 1);
  const approx = new BigInt64Array(second.length * k);
  second.forEach((id, q) => {
    const row = Array.from(r.ids.subarray(q * (k + 1), (q + 1) * (k + 1))).filter((x) => x !== BigInt(id));
    approx.set(row.slice(0, k), q * k);
  });
  const { recall } = recallOf(exact, approx, second.length, k);
  t.ok(recall >= target, `recall@10 with the tuned defaults on the second sample: ${recall.toFixed(4)}`);
  // recall picks a point: the same results as its settings given explicitly; nprobe beside it wins.
  const c = index.pointFor(0.9) as { nprobe: number; kFactor: number; efSearch?: number };
  const few = queries.subarray(0, 20 * dim);
  t.same((await index.search(few, k, { recall: 0.9 })).ids, (await index.search(few, k, c)).ids);
  t.same(
    (await index.search(few, k, { recall: 0.9, nprobe: 1 })).ids,
    (await index.search(few, k, { ...c, nprobe: 1 })).ids,
  );
  await index.close();
  await source.close();
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  createIndex,
  type FaissIndex,
  faissVersion,
  getNumThreads,
  maxK,
  readIndex,
  setNumThreads,
} from '../../src/native/index.js';
import { bruteForceTopK, clusteredDataset, denseIds, gaussianVectors } from '../../src/testing/index.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-native-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const dim = 32;
const corpus = gaussianVectors(3000, dim, 1);
const queries = gaussianVectors(20, dim, 2);
// Ids far above 2^32 prove FAISS keeps the caller's 64-bit ids.
const bigIds = new BigInt64Array(3000).map((_, i) => 10_000_000_000n + BigInt(i) * 3n);

t.test('the addon loads and reports its FAISS version and limits', async (t) => {
  t.equal(faissVersion(), '1.7.3');
  t.equal(maxK(), 4096);
});

for (const metric of ['ip', 'l2'] as const) {
  t.test(`Flat (${metric}) returns exactly the brute-force neighbours with 64-bit ids`, async (t) => {
    const index = createIndex('Flat', dim, metric);
    t.equal(index.structure, 'IDMap(Flat)', 'flat indexes get an id map');
    t.equal(index.isTrained, true);
    await index.add(corpus, bigIds);
    t.equal(index.ntotal, 3000);
    const got = await index.search(queries, 10);
    const want = bruteForceTopK(corpus, bigIds, queries, dim, 10, metric);
    t.same(Array.from(got.ids), Array.from(want.ids));
    for (let i = 0; i < want.distances.length; i++) {
      if (Math.abs(got.distances[i]! - want.distances[i]!) > 1e-3) {
        t.fail(`distance ${i}: ${got.distances[i]} vs ${want.distances[i]}`);
        break;
      }
    }
    await index.close();
  });
}

t.test('IVF search honours nprobe per call, not as global state', async (t) => {
  const { corpus: c, queries: q } = clusteredDataset(20_000, 100, dim, { seed: 7, clusters: 20 });
  const ids = denseIds(20_000);
  const index = createIndex('IVF64,Flat', dim, 'ip');
  t.equal(index.isTrained, false);
  t.equal(index.nlist, 64);
  await index.train(c);
  await index.add(c, ids);
  const exact = bruteForceTopK(c, ids, q.subarray(0, 20 * dim), dim, 10, 'ip');
  const recall = async (nprobe: number): Promise<number> => {
    const r = await index.search(q.subarray(0, 20 * dim), 10, { nprobe });
    let hits = 0;
    for (let i = 0; i < 20; i++) {
      const want = new Set(exact.ids.subarray(i * 10, i * 10 + 10));
      for (let j = 0; j < 10; j++) if (want.has(r.ids[i * 10 + j]!)) hits++;
    }
    return hits / 200;
  };
  // Interleaved calls: if nprobe leaked between calls these would not alternate.
  const [r1, r64, r1again] = await Promise.all([recall(1), recall(64), recall(1)]);
  t.ok(r1 < 0.9, `nprobe 1 is approximate (${r1})`);
  t.equal(r64, 1, 'nprobe = nlist visits every list: exact');
  t.equal(r1again, r1, 'nprobe 1 again gives the same answer');
  // Beyond nlist is clamped, not an error.
  t.equal((await index.search(q.subarray(0, dim), 5, { nprobe: 100000 })).ids.length, 5);
  await index.close();
});

t.test('refine stage: kFactor per call re-scores more candidates', async (t) => {
  const { corpus: c, queries: q } = clusteredDataset(10_000, 50, dim, { seed: 9, clusters: 10 });
  const ids = denseIds(10_000);
  const index = createIndex('IVF16,PQ4np,RFlat', dim, 'ip');
  t.match(index.structure, /^IDMap\(Refine\(IVFPQ\(nlist=16,M=4,nbits=8\),Flat\)\)$/);
  await index.train(c);
  await index.add(c, ids);
  const exact = bruteForceTopK(c, ids, q, dim, 10, 'ip');
  const recall = async (kFactor: number): Promise<number> => {
    const r = await index.search(q, 10, { nprobe: 16, kFactor });
    let hits = 0;
    for (let i = 0; i < 50; i++) {
      const want = new Set(exact.ids.subarray(i * 10, i * 10 + 10));
      for (let j = 0; j < 10; j++) if (want.has(r.ids[i * 10 + j]!)) hits++;
    }
    return hits / 500;
  };
  const low = await recall(1);
  const high = await recall(50);
  t.ok(high > low, `kFactor 50 (${high}) beats kFactor 1 (${low})`);
  t.ok(high >= 0.98, `exact re-scoring of 500 candidates finds the true top 10 (${high})`);
  // Refined distances are exact inner products.
  const r = await index.search(q.subarray(0, dim), 1, { nprobe: 16, kFactor: 50 });
  t.equal(r.ids[0], exact.ids[0]);
  t.ok(Math.abs(r.distances[0]! - exact.distances[0]!) < 1e-4);
  await index.close();
});

for (const [factory, train] of [
  ['Flat', false],
  ['IVF32,PQ8np', true],
  ['IVF32,PQ8np,RFlat', true],
  ['IVF32,SQ8', true],
] as const) {
  t.test(`${factory}: write -> read (plain and mmap) gives identical search results`, async (t) => {
    const { corpus: c, queries: q } = clusteredDataset(8_000, 30, dim, { seed: 11, clusters: 8 });
    const ids = denseIds(8_000, 5);
    const index = createIndex(factory, dim, 'l2');
    if (train) await index.train(c);
    await index.add(c, ids);
    const before = await index.search(q, 10, { nprobe: 4, kFactor: 4 });
    const path = join(dir, `${factory.replace(/[^A-Za-z0-9]/g, '_')}.faiss`);
    await index.write(path);
    for (const mmap of [false, true]) {
      const back = await readIndex(path, { mmap });
      t.equal(back.ntotal, 8000, `mmap=${mmap}: count`);
      t.equal(back.dim, dim);
      t.equal(back.metric, 'l2');
      t.equal(back.readOnly, mmap);
      t.equal(back.structure, index.structure, 'same structure');
      const after = await back.search(q, 10, { nprobe: 4, kFactor: 4 });
      t.same(Array.from(after.ids), Array.from(before.ids), `mmap=${mmap}: same ids`);
      t.same(Array.from(after.distances), Array.from(before.distances), `mmap=${mmap}: same distances`);
      await back.close();
    }
    await index.close();
  });
}

t.test('cloneEmpty shares training; merge equals one index holding everything', async (t) => {
  for (const factory of ['Flat', 'IVF32,PQ8np', 'IVF32,PQ8np,RFlat', 'IVF32,PQ8np,Refine(SQ8)']) {
    const { corpus: c, queries: q } = clusteredDataset(6_000, 30, dim, { seed: 13, clusters: 8 });
    const template = createIndex(factory, dim, 'ip');
    await template.train(c);
    const [whole, a, b] = await Promise.all([
      template.cloneEmpty(),
      template.cloneEmpty(),
      template.cloneEmpty(),
    ]);
    t.equal(a.isTrained, true, `${factory}: clone is trained`);
    t.equal(a.ntotal, 0, `${factory}: clone is empty`);
    const ids = denseIds(6_000);
    await whole.add(c, ids);
    await a.add(c.subarray(0, 2_500 * dim), ids.subarray(0, 2_500));
    await b.add(c.subarray(2_500 * dim), ids.subarray(2_500));
    await a.merge(b);
    t.equal(a.ntotal, 6000);
    t.equal(b.ntotal, 0, 'merged-from index ends empty');
    const opts = { nprobe: 8, kFactor: 4 };
    const [rw, ra] = await Promise.all([whole.search(q, 10, opts), a.search(q, 10, opts)]);
    t.same(Array.from(ra.ids), Array.from(rw.ids), `${factory}: merged ids`);
    t.same(Array.from(ra.distances), Array.from(rw.distances), `${factory}: merged distances`);
    await Promise.all([template, whole, a, b].map((x: FaissIndex) => x.close()));
  }
});

t.test('fast-scan IVF: nprobe per call through the probe gate; merge refused cleanly', async (t) => {
  const { corpus: c, queries: q } = clusteredDataset(10_000, 40, dim, { seed: 17, clusters: 10 });
  const ids = denseIds(10_000);
  const index = createIndex('IVF64,PQ16x4fs', dim, 'ip');
  await index.train(c);
  await index.add(c, ids);
  const one = await index.search(q, 10, { nprobe: 1 });
  const all = await index.search(q, 10, { nprobe: 64 });
  // Many concurrent searches alternating nprobe must each see their own value.
  const mixed = await Promise.all(
    Array.from({ length: 40 }, (_, i) => index.search(q, 10, { nprobe: i % 2 === 0 ? 1 : 64 })),
  );
  mixed.forEach((r, i) => {
    t.same(Array.from(r.ids), Array.from(i % 2 === 0 ? one.ids : all.ids), `search ${i}`);
  });
  t.notSame(Array.from(one.ids), Array.from(all.ids), 'nprobe changes the answer');
  const other = await index.cloneEmpty();
  await t.rejects(index.merge(other), { code: 'BAD_INPUT', message: /fast-scan/ });
  await Promise.all([index.close(), other.close()]);
});

t.test(
  'removeIds equals an index never given those vectors; kinds that cannot are refused cleanly',
  async (t) => {
    const { corpus: c, queries: q } = clusteredDataset(6_000, 30, dim, { seed: 19, clusters: 8 });
    const ids = denseIds(6_000);
    // Every third id of the first thousand, and ids the index never held (ignored).
    const gone = BigInt64Array.from([...Array.from({ length: 334 }, (_, i) => BigInt(i * 3)), 99_999n]);
    const keep = (i: number) => i >= 1000 || i % 3 !== 0;
    const keptRows = Array.from({ length: 6_000 }, (_, i) => i).filter(keep);
    const kept = new Float32Array(keptRows.length * dim);
    for (const [j, r] of keptRows.entries()) kept.set(c.subarray(r * dim, (r + 1) * dim), j * dim);
    for (const factory of ['Flat', 'IVF32,Flat', 'IVF32,PQ8np', 'IVF32_HNSW8,PQ8np', 'PCA16,IVF32,PQ8np']) {
      const template = createIndex(factory, dim, 'ip');
      await template.train(c);
      const [full, never] = await Promise.all([template.cloneEmpty(), template.cloneEmpty()]);
      await full.add(c, ids);
      await never.add(
        kept,
        BigInt64Array.from(keptRows, (r) => BigInt(r)),
      );
      t.ok(full.removable, `${factory}: removable`);
      t.equal(await full.removeIds(gone), 334, `${factory}: removed the 334 it held`);
      t.equal(full.ntotal, never.ntotal);
      const [rf, rn] = await Promise.all([
        full.search(q, 10, { nprobe: 8 }),
        never.search(q, 10, { nprobe: 8 }),
      ]);
      t.same(Array.from(rf.ids), Array.from(rn.ids), `${factory}: the same neighbours`);
      t.equal(await full.removeIds(gone), 0, `${factory}: removing again removes nothing`);
      await Promise.all([template, full, never].map((x) => x.close()));
    }
    // FAISS would throw inside an OpenMP loop for fast-scan lists (terminating the process): refused first.
    for (const factory of ['IVF32,PQ8x4fs', 'HNSW8', 'IVF32,PQ8np,RFlat']) {
      const index = createIndex(factory, dim, 'ip');
      await index.train(c);
      await index.add(c, ids);
      t.notOk(index.removable, `${factory}: not removable`);
      await t.rejects(index.removeIds(gone), { code: 'BAD_INPUT', message: /cannot drop vectors/ }, factory);
      t.equal(index.ntotal, 6_000, `${factory}: untouched`);
      // A memory map answers for its file (index --compact checks a shard so before any work).
      const file = join(dir, 'not-removable.faiss');
      await index.write(file);
      await index.close();
      const m = await readIndex(file, { mmap: true });
      t.notOk(m.removable, `${factory}: its memory map says so too`);
      await m.close();
    }
    const mapped = join(dir, 'remove.faiss');
    const ivf = createIndex('IVF32,PQ8np', dim, 'ip');
    await ivf.train(c);
    await ivf.add(c, ids);
    await ivf.write(mapped);
    await ivf.close();
    const ro = await readIndex(mapped, { mmap: true });
    t.ok(ro.removable, 'a memory map of a removable index says so');
    await t.rejects(ro.removeIds(gone), { code: 'INDEX_READ_ONLY' }, 'a memory-mapped index is read-only');
    await ro.close();
  },
);

t.test('thread count is adjustable', async (t) => {
  const before = getNumThreads();
  t.equal(before.blas, 1, 'one BLAS thread by default');
  setNumThreads(1, 1);
  t.same(getNumThreads(), { omp: 1, blas: 1 });
  const index = createIndex('Flat', dim, 'ip');
  await index.add(corpus, denseIds(3000));
  t.equal((await index.search(queries, 3)).ids.length, 60, 'search works with one thread');
  await index.close();
  setNumThreads(before.omp, before.blas);
  t.same(getNumThreads(), before);
  t.throws(() => setNumThreads(0), { code: 'BAD_INPUT' });
});

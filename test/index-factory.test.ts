import t from 'tap';
import { chooseFactory, MIN_POINTS_PER_CENTROID, pqSubquantizers } from '../src/index/factory.js';
import { mergeTopK } from '../src/index/topk.js';
import { createIndex } from '../src/native/index.js';

t.test('small collections get exact search', async (t) => {
  const plan = chooseFactory({ n: 50_000, dim: 384 });
  t.equal(plan.factory, 'Flat');
  t.equal(plan.trainSize, 0);
  t.equal(chooseFactory({ n: 100_000, dim: 384 }).factory, 'Flat');
  t.equal(chooseFactory({ n: 5_000, dim: 384, flatMax: 10 }).factory, 'IVF128,PQ48np,Refine(SQ8)');
  t.equal(
    chooseFactory({ n: 500, dim: 384, flatMax: 10 }).factory,
    'Flat',
    'too few points to train 16 lists',
  );
});

t.test(
  'IVF-PQ above: nlist from sqrt(n), capped by training points; PQ m divides dim; np suffix',
  async (t) => {
    const m1 = chooseFactory({ n: 1_000_000, dim: 384 });
    t.equal(m1.factory, 'IVF4096,PQ48np,Refine(SQ8)');
    t.match(m1, { kind: 'ivf-pq', nlist: 4096, pqM: 48, pqBits: 8, refine: 'sq8', trainSize: 204_800 });
    t.same(m1.search, { nprobe: 32, kFactor: 8 });
    t.match(m1.reason, /nlist 4096/);
    for (const n of [150_000, 400_000, 1_000_000, 10_000_000, 1_000_000_000]) {
      for (const dim of [384, 768, 100, 97]) {
        const p = chooseFactory({ n, dim });
        t.ok(p.nlist <= 8 * Math.sqrt(n), `n=${n}: nlist ${p.nlist} <= 8 sqrt(n)`);
        t.ok(p.trainSize / p.nlist >= MIN_POINTS_PER_CENTROID, `n=${n}: >= 39 training points per list`);
        t.ok(p.trainSize <= Math.min(n, 262_144), 'training sample within the budget');
        t.equal(dim % p.pqM, 0, `dim ${dim}: PQ${p.pqM} divides it`);
        t.ok(p.pqM <= dim / 8 || p.pqM === 1, 'about a byte per 8 dimensions');
        t.match(p.factory, /^IVF\d+,PQ\d+np,Refine\(SQ8\)$/);
      }
    }
    t.ok(
      chooseFactory({ n: 400_000, dim: 384 }).nlist >= (4 * Math.sqrt(400_000)) / 2,
      'not absurdly coarse',
    );
    t.equal(chooseFactory({ n: 1_000_000, dim: 384, maxTrainingVectors: 1_000_000 }).nlist, 4096);
    t.equal(chooseFactory({ n: 10_000_000, dim: 384, maxTrainingVectors: 1_000_000 }).nlist, 16384);
  },
);

t.test('refine and fast-scan options', async (t) => {
  t.equal(chooseFactory({ n: 1e6, dim: 384, refine: 'none' }).factory, 'IVF4096,PQ48np');
  t.equal(chooseFactory({ n: 1e6, dim: 384, refine: 'none' }).search.kFactor, 1);
  t.equal(chooseFactory({ n: 1e6, dim: 384, refine: 'flat' }).factory, 'IVF4096,PQ48np,RFlat');
  const fs = chooseFactory({ n: 1e6, dim: 384, fastScan: true });
  t.equal(fs.factory, 'IVF4096,PQ96x4fs,Refine(SQ8)', 'same 48 bytes as 96 4-bit codes');
  t.equal(fs.pqBits, 4);
  t.throws(() => chooseFactory({ n: 0, dim: 384 }), { code: 'BAD_INPUT' });
  t.throws(() => chooseFactory({ n: 10, dim: 1.5 }), { code: 'BAD_INPUT' });
});

t.test('every chosen factory string is one FAISS accepts', async (t) => {
  for (const opts of [
    { n: 1e6, dim: 384 },
    { n: 1e6, dim: 100, refine: 'flat' as const },
    { n: 3e5, dim: 768, fastScan: true },
    { n: 2e5, dim: 97, refine: 'none' as const },
  ]) {
    const plan = chooseFactory(opts);
    const index = createIndex(plan.factory, opts.dim, 'ip');
    t.equal(index.nlist, plan.nlist, `${plan.factory}: nlist`);
    await index.close();
  }
});

t.test('pqSubquantizers', async (t) => {
  t.equal(pqSubquantizers(384, 48), 48);
  t.equal(pqSubquantizers(100, 12.5), 10);
  t.equal(pqSubquantizers(97, 12), 1, 'a prime dimension: one sub-quantizer');
});

t.test('mergeTopK keeps the best k across parts for both metrics', async (t) => {
  const part = (d: number[], ids: number[]) => ({
    distances: Float32Array.from(d),
    ids: BigInt64Array.from(ids.map(BigInt)),
  });
  // Two queries, k = 3.
  const a = part([0.9, 0.5, 0.1, 0.8, 0.7, -1], [1, 2, 3, 10, 11, -1]);
  const b = part([0.95, 0.5, 0.4, 0.99, 0.2, 0.1], [4, 0, 6, 12, 13, 14]);
  const ip = mergeTopK([a, b], 2, 3, 'ip');
  t.same(Array.from(ip.ids), [4n, 1n, 0n, 12n, 10n, 11n], 'IP: larger first; a tie goes to the smaller id');
  t.same(Array.from(ip.distances), Array.from(Float32Array.from([0.95, 0.9, 0.5, 0.99, 0.8, 0.7])));

  const c = part([0.1, 0.2, 0.3], [7, 8, 9]);
  const d = part(
    [0.15, -1, -1],
    [5, -1, -1].map((x) => x),
  );
  d.distances[1] = 3.4e38;
  d.distances[2] = 3.4e38;
  const l2 = mergeTopK([c, d], 1, 3, 'l2');
  t.same(Array.from(l2.ids), [7n, 5n, 8n], 'L2: smaller first; empty slots skipped');

  const sparse = mergeTopK([part([1, -1], [3, -1]), part([-1, -1], [-1, -1])], 1, 2, 'ip');
  t.same(Array.from(sparse.ids), [3n, -1n], 'fewer than k hits: padded with -1');
  t.ok(sparse.distances[1]! < -1e38, 'with the FAISS sentinel distance');
});

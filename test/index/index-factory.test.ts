import t from 'tap';
import { indexCost } from '../../src/index/cost.js';
import {
  chooseFactory,
  MIN_POINTS_PER_CENTROID,
  planForFactory,
  pqSubquantizers,
} from '../../src/index/factory.js';
import { mergeTopK } from '../../src/index/topk.js';
import { createIndex } from '../../src/native/index.js';

t.test('small collections get exact search', async (t) => {
  const plan = chooseFactory({ n: 50_000, dim: 384 });
  t.equal(plan.factory, 'Flat');
  t.equal(plan.trainSize, 0);
  t.equal(chooseFactory({ n: 100_000, dim: 384 }).factory, 'Flat');
  t.equal(chooseFactory({ n: 5_000, dim: 384, flatMax: 10 }).factory, 'IVF64,PQ48np,Refine(SQ8)');
  t.equal(
    chooseFactory({ n: 500, dim: 384, flatMax: 10 }).factory,
    'Flat',
    'too few points to train 16 lists',
  );
});

t.test('below 10^6: a flat coarse quantizer, nlist ~8 sqrt(n), >= 40 training points a list', async (t) => {
  const p = chooseFactory({ n: 208_000, dim: 384, vectorsKept: true });
  t.equal(p.factory, 'IVF2048,PQ48np', 'the exact re-scoring is outside FAISS: no suffix');
  t.match(p, {
    quantizer: 'flat',
    nlist: 2048,
    pqM: 48,
    refine: 'vectors',
    trainSize: 81_920,
    training: 'kmeans',
  });
  t.same(p.search, { nprobe: 32, kFactor: 8, refine: 'vectors' });
  for (const n of [150_000, 400_000, 999_999]) {
    for (const dim of [384, 768, 100, 97]) {
      const q = chooseFactory({ n, dim });
      t.equal(q.quantizer, 'flat');
      t.ok(q.nlist <= 8 * Math.sqrt(n), `n=${n}: nlist ${q.nlist} <= 8 sqrt(n)`);
      t.ok(q.nlist >= 2 * Math.sqrt(n), `n=${n}: not absurdly coarse`);
      t.ok(q.trainSize / q.nlist >= MIN_POINTS_PER_CENTROID, `n=${n}: >= 39 training points per list`);
      t.equal(dim % q.pqM, 0, `dim ${dim}: PQ${q.pqM} divides it`);
      t.ok(q.pqM <= dim / 8 || q.pqM === 1, 'about a byte per 8 dimensions');
    }
  }
});

t.test('from 10^6: HNSW coarse quantizer, FAISS list counts, two-level training', async (t) => {
  const cases: Array<[number, number]> = [
    [1_000_000, 16_384], // held to n / 40
    [3_000_000, 65_536],
    [10_000_000, 65_536],
    [50_000_000, 262_144],
    [400_000_000, 1_048_576],
    [1_000_000_000, 1_048_576],
  ];
  for (const [n, nlist] of cases) {
    const p = chooseFactory({ n, dim: 384, vectorsKept: true });
    t.equal(p.nlist, nlist, `n=${n}: nlist ${nlist}`);
    t.equal(p.factory, `IVF${nlist}_HNSW32,PQ48np`);
    t.equal(p.training, 'two-level');
    t.equal(p.trainSize, Math.min(n, 40 * nlist), 'training sample sized from nlist');
    t.ok(p.search.efSearch !== undefined && p.search.efSearch >= p.search.nprobe, 'efSearch >= nprobe');
    t.ok(p.search.nprobe >= 32 && p.search.nprobe <= 1024);
  }
  t.same(chooseFactory({ n: 10_000_000, dim: 384 }).search, { nprobe: 128, kFactor: 1, efSearch: 256 });
  t.equal(chooseFactory({ n: 10_000_000, dim: 384, maxTrainingVectors: 1_000_000 }).nlist, 16_384);
  t.equal(chooseFactory({ n: 10_000_000, dim: 384, trainPointsPerList: 100 }).nlist, 65_536);
  t.equal(chooseFactory({ n: 10_000_000, dim: 384, trainPointsPerList: 200 }).nlist, 32_768);
});

t.test('refine: exact vectors when kept, SQ8 in RAM up to 5M, else none with OPQ', async (t) => {
  t.equal(chooseFactory({ n: 4e6, dim: 384 }).factory, 'IVF65536_HNSW32,PQ48np,Refine(SQ8)');
  const big = chooseFactory({ n: 2e7, dim: 384 });
  t.equal(big.factory, 'OPQ48,IVF262144_HNSW32,PQ48np', 'PQ scores are final: OPQ pays');
  t.equal(big.search.kFactor, 1);
  t.equal(chooseFactory({ n: 2e7, dim: 384, vectorsKept: true }).opq, 0, 'no OPQ when re-scored exactly');
  t.equal(chooseFactory({ n: 3e5, dim: 384, refine: 'flat' }).factory, 'IVF4096,PQ48np,RFlat');
  const fs = chooseFactory({ n: 3e5, dim: 384, fastScan: true });
  t.equal(fs.factory, 'IVF4096,PQ96x4fs,Refine(SQ8)', 'same 48 bytes as 96 4-bit codes');
  t.equal(fs.pqBits, 4);
  t.throws(() => chooseFactory({ n: 0, dim: 384 }), { code: 'BAD_INPUT' });
  t.throws(() => chooseFactory({ n: 10, dim: 1.5 }), { code: 'BAD_INPUT' });
});

t.test('the cost model: bytes a vector in RAM, on disk, memory-mapped', async (t) => {
  const kept = chooseFactory({ n: 10_000_000, dim: 384, vectorsKept: true });
  t.same(kept.cost.perVector, { ram: 56, disk: 56 + 768, mapped: 768 }, 'PQ48 code + id; vectors.f16 mapped');
  t.ok(kept.cost.fixed.ram > 65_536 * 384 * 4, 'the HNSW quantizer holds its centroids');
  t.equal(kept.cost.total.ram, kept.cost.fixed.ram + 56 * 10_000_000);
  const sq8 = chooseFactory({ n: 1_000_000, dim: 384 });
  t.same(sq8.cost.parts, { code: 48, id: 8, refine: 384, idMap: 8 });
  const l2 = indexCost({ ...kept, metric: 'l2', quantizer: 'flat', nlist: 1024 }, 1);
  t.ok(l2.fixed.ram >= 1024 * 48 * 256 * 4, 'an L2 IVF-PQ precomputes its distance tables');
  const mm = indexCost(kept, 1000, { mmap: true });
  t.equal(mm.perVector.ram, 0, 'memory-mapped lists cost no heap');
  t.equal(mm.perVector.mapped, 56 + 768);
  t.match(kept.reason, /RAM 6\d\d MB/);
});

t.test('a RAM budget picks smaller codes, or refuses naming the smallest budget', async (t) => {
  const fits = chooseFactory({ n: 10_000_000, dim: 384, maxRamBytes: 500e6 });
  t.equal(fits.pqM, 24, 'PQ48 needs ~700 MB; PQ24 fits');
  t.ok(fits.cost.total.ram <= 500e6);
  t.throws(() => chooseFactory({ n: 10_000_000, dim: 384, maxRamBytes: 50e6 }), {
    code: 'OVER_BUDGET',
    message: /needs 3\d\d MB/,
  });
});

t.test('a budget without kept vectors buys finer PQ codes before coarser ones', async (t) => {
  const p = chooseFactory({ n: 100_000, dim: 384, maxRamBytes: 16e6 });
  t.match(
    p,
    { pqM: 96, refine: 'none', opq: 96 },
    'SQ8 refine (45 MB), PQ192 and PQ128 do not fit; PQ96 does',
  );
  t.ok(p.cost.total.ram <= 16e6);
  t.match(p.reason, /over budget: .*Refine\(SQ8\)|over budget: IVF2048,PQ48np \+ SQ8 refine/);
  const kept = chooseFactory({ n: 100_000, dim: 384, vectorsKept: true, maxRamBytes: 16e6 });
  t.match(kept, { pqM: 48, refine: 'vectors' }, 'kept vectors: PQ48 re-scored exactly, no RAM');
});

t.test('given factory strings: shape, training and cost follow the same rules', async (t) => {
  const p = planForFactory('OPQ16,IVF1024_HNSW32,PQ16np', { n: 50_000, dim: 64 });
  t.match(p, {
    opq: 16,
    nlist: 1024,
    quantizer: 'hnsw',
    hnswM: 32,
    pqM: 16,
    refine: 'none',
    training: 'kmeans',
  });
  t.equal(p.trainSize, 40_960);
  t.equal(planForFactory('IVF65536_HNSW32,PQ48np', { n: 1e7, dim: 384 }).training, 'two-level');
  t.equal(planForFactory('IVF4096,PQ48np,RFlat', { n: 1e6, dim: 384 }).refine, 'flat');
  t.equal(planForFactory('IVF1024,PQ48np', { n: 1e6, dim: 384, vectorsKept: true }).search.refine, 'vectors');
  t.equal(planForFactory('IVF1024,SQ8', { n: 1e6, dim: 384 }).cost.perVector.ram, 384 + 8);
  t.equal(planForFactory('HNSW32', { n: 1e6, dim: 384 }).kind, 'other');
  t.equal(planForFactory('Flat', { n: 1e6, dim: 384 }).kind, 'flat');
});

t.test('every chosen factory string is one FAISS accepts', async (t) => {
  for (const opts of [
    { n: 1e6, dim: 384 },
    { n: 1e6, dim: 100, refine: 'flat' as const },
    { n: 3e5, dim: 768, fastScan: true },
    { n: 2e5, dim: 97, refine: 'none' as const },
    { n: 2e7, dim: 384 },
    { n: 1e7, dim: 384, vectorsKept: true },
  ]) {
    const plan = chooseFactory(opts);
    const index = createIndex(plan.factory, opts.dim, 'ip');
    t.equal(index.nlist, plan.nlist, `${plan.factory}: nlist`);
    t.equal(index.hnswQuantizer, plan.quantizer === 'hnsw', `${plan.factory}: quantizer`);
    t.equal(index.preTransform, plan.opq > 0, `${plan.factory}: OPQ`);
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

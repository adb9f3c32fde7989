// The addon's SIMD float kernels stand in for Debian libfaiss's scalar ones (src/native/distance_kernels.cc):
// they must be the ones FAISS calls, and give the same answers on every length (full blocks and tails).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { fromHalf, toHalf } from '../../src/index/index.js';
import { checkDistanceKernels, createIndex, distanceKernels, HalfVectors } from '../../src/native/index.js';
import { bruteForceTopK, denseIds, gaussianVectors } from '../../src/testing/index.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-kernels-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(b));

t.test('the SIMD kernels are the ones FAISS calls, and agree with its scalar loops', async (t) => {
  t.match(distanceKernels(), /^(avx2-fma-f16c|avx2-fma|portable)$/);
  const check = checkDistanceKernels();
  t.equal(check.linked, true, 'the library reaches the addon kernels, not its own scalar loops');
  t.ok(check.maxRelError < 1e-5, `largest relative difference ${check.maxRelError}`);
  t.equal(check.nearestMismatches, 0, 'same nearest centroid on every shape');
});

// 8: one PQ sub-vector; 37 and 45: tails after 32- and 16-wide blocks; 384: the encoders' width.
for (const dim of [8, 37, 45, 384]) {
  for (const metric of ['ip', 'l2'] as const) {
    t.test(`${dim}-d ${metric}: Flat and HNSW single-query distances equal the float64 sums`, async (t) => {
      const n = 400;
      const corpus = gaussianVectors(n, dim, dim);
      const queries = gaussianVectors(12, dim, dim + 1);
      const ids = denseIds(n);
      const want = bruteForceTopK(corpus, ids, queries, dim, 5, metric);
      const exact = (q: number, id: number) => {
        let s = 0;
        for (let i = 0; i < dim; i++) {
          const a = queries[q * dim + i]!;
          const b = corpus[id * dim + i]!;
          s += metric === 'ip' ? a * b : (a - b) ** 2;
        }
        return s;
      };
      for (const factory of ['Flat', 'HNSW16']) {
        const index = createIndex(factory, dim, metric);
        await index.add(corpus, ids);
        // One query a call: FAISS takes the kernel path below 20 queries, BLAS above.
        for (let q = 0; q < 12; q++) {
          const got = await index.search(queries.subarray(q * dim, (q + 1) * dim), 5);
          if (factory === 'Flat') {
            t.same(Array.from(got.ids), Array.from(want.ids.subarray(q * 5, q * 5 + 5)), `Flat query ${q}`);
          }
          const bad = Array.from(got.ids).findIndex(
            (id, j) => !close(got.distances[j]!, exact(q, Number(id))),
          );
          t.equal(bad, -1, `${factory} query ${q}: distances of the returned ids`);
        }
        await index.close();
      }
    });
  }

  t.test(`${dim}-d: exact re-scores from half floats equal the float64 sums`, async (t) => {
    const n = 150;
    const halves = toHalf(gaussianVectors(n, dim, 3 * dim));
    const path = join(dir, `v${dim}.f16`);
    writeFileSync(path, halves);
    const rows = fromHalf(halves);
    const query = gaussianVectors(1, dim, 5);
    const hv = await HalfVectors.open(path, dim);
    for (const metric of ['ip', 'l2'] as const) {
      const got = await hv.rescore(query, denseIds(n), n, metric);
      for (let j = 0; j < n; j++) {
        const id = Number(got.ids[j]);
        let s = 0;
        for (let i = 0; i < dim; i++) {
          const x = rows[id * dim + i]!;
          s += metric === 'ip' ? query[i]! * x : (query[i]! - x) ** 2;
        }
        if (!close(got.distances[j]!, s)) t.fail(`${metric} row ${id}: ${got.distances[j]} vs ${s}`);
      }
      t.pass(`${metric}: ${n} rows`);
    }
    // Repeats, and runs of consecutive ids (read together, at most 64 rows a read): one of 80, one to the end.
    const run = (from: number, to: number) => Array.from({ length: to - from }, (_, x) => from + x);
    const picked = [3, 0, 3, n - 1, ...run(10, 90), 5, 6, 7, 7, 8, ...run(n - 3, n)];
    const rowsBack = await hv.gather(BigInt64Array.from(picked, BigInt));
    const expected = picked.flatMap((id) => Array.from(rows.subarray(id * dim, (id + 1) * dim)));
    t.same(Array.from(rowsBack), expected, 'gather: the rows, converted exactly, in the order given');
    const out = new Float32Array((picked.length + 1) * dim).subarray(dim);
    t.equal(await hv.gather(BigInt64Array.from(picked, BigInt), out), out, 'gather into a given view');
    t.same(Array.from(out), expected, 'the same rows, written into it');
    await t.rejects(hv.gather(BigInt64Array.from([0n]), new Float32Array(dim + 1)), {
      code: 'BAD_INPUT',
      message: /out must be/,
    });
    await t.rejects(hv.gather(BigInt64Array.from([0n, BigInt(n)])), {
      code: 'BAD_INPUT',
      message: /ids\[1\]/,
    });
    await hv.close();
  });
}

/**
 * IVF-PQ quality floor on 100k clustered 384-d unit vectors (the MiniLM shape), against exact search.
 *
 * Factory: IVF512,PQ48np,RFlat.
 * - IVF512: 1.6*sqrt(n) lists, below the usual 4*sqrt(n) so training stays ~15 s on 2 cores (20k points,
 *   39 per list as FAISS asks); the coarse level is what nprobe trades against recall.
 * - PQ48np: 48 one-byte codes (8 dimensions each), the size the chooser picks for 384-d; `np` skips
 *   polysemous training (20x slower, unused).
 * - RFlat: PQ48 codes alone order a neighbourhood loosely (recall@10 ~0.63 here, 0.36 for IVF1216,PQ48 on
 *   planted near-duplicates); re-scoring k*kFactor = 80 candidates exactly makes recall depend on the
 *   coarse level only.
 * Measured on this data: nprobe 1: 0.483, 4: 0.939, 16: 0.994, 32: 0.994 (kFactor 8); kFactor 1 at
 * nprobe 32: 0.630. Floor: 0.95 at nprobe 32: margin for seeds and FAISS builds, yet far above what a
 * broken refine stage (kFactor ignored: ~0.63) or a broken nprobe (stuck at 1: ~0.48) can reach.
 */
import t from 'tap';
import { createIndex } from '../../src/native/index.js';
import { bruteForceTopK, clusteredDataset, denseIds, recallAtK } from '../../src/testing/index.js';

const dim = 384;
const n = 100_000;
const nq = 500;
const k = 10;

t.test('IVF512,PQ48np,RFlat: recall@10 >= 0.95 at nprobe 32 and rising with nprobe', async (t) => {
  const { corpus, queries } = clusteredDataset(n, nq, dim, { seed: 42 });
  const ids = denseIds(n);

  const flat = createIndex('Flat', dim, 'ip');
  await flat.add(corpus, ids);
  const exact = await flat.search(queries, k);
  await flat.close();
  // The reference itself, spot-checked against brute force in JS.
  const spot = bruteForceTopK(corpus, ids, queries.subarray(0, 2 * dim), dim, k, 'ip');
  t.same(Array.from(exact.ids.subarray(0, 2 * k)), Array.from(spot.ids), 'flat reference is exact');

  const index = createIndex('IVF512,PQ48np,RFlat', dim, 'ip');
  let start = performance.now();
  await index.train(corpus.subarray(0, 20_000 * dim));
  const trainS = (performance.now() - start) / 1000;
  start = performance.now();
  await index.add(corpus, ids);
  const addS = (performance.now() - start) / 1000;
  t.comment(
    `train ${trainS.toFixed(1)} s (20k points), add ${addS.toFixed(1)} s (${(n / addS).toFixed(0)} vec/s)`,
  );

  const recall = async (nprobe: number, kFactor: number): Promise<number> => {
    const r = await index.search(queries, k, { nprobe, kFactor });
    return recallAtK(exact.ids, r.ids, nq, k);
  };
  const byProbe = new Map<number, number>();
  for (const nprobe of [1, 4, 16, 32]) byProbe.set(nprobe, await recall(nprobe, 8));
  const pqOnly = await recall(32, 1);
  t.comment(
    `recall@10 (kFactor 8): ${[...byProbe].map(([p, r]) => `nprobe ${p}: ${r.toFixed(3)}`).join(', ')}; ` +
      `kFactor 1 at nprobe 32: ${pqOnly.toFixed(3)}`,
  );
  const r1 = byProbe.get(1)!;
  const r4 = byProbe.get(4)!;
  const r16 = byProbe.get(16)!;
  const r32 = byProbe.get(32)!;
  t.ok(r32 >= 0.95, `recall@10 at nprobe 32 = ${r32} >= 0.95`);
  t.ok(r1 < r4 && r4 < r32, `recall rises with nprobe (${r1} < ${r4} < ${r32})`);
  t.ok(r16 <= r32 + 1e-9 && r4 <= r16 + 1e-9, 'and never falls');
  t.ok(pqOnly < r32 - 0.1, `the refine stage matters (${pqOnly} without it)`);
  await index.close();
});

import t from 'tap';
import { pairKey, UnionFind } from '../../src/jobs/cluster.js';

t.test('pairs are grouped transitively into multi-reference sets', async (t) => {
  const uf = new UnionFind();
  // 1-2, 2-3 and 3-7 chain into one set; 10-11 is another; 20-20 is no pair.
  for (const [a, b] of [
    [2, 1],
    [3, 2],
    [10, 11],
    [7, 3],
    [20, 20],
  ] as const)
    uf.union(a, b);
  t.same(uf.clusters(), [
    [1, 2, 3, 7],
    [10, 11],
  ]);
  t.equal(uf.find(7), uf.find(1));
  t.not(uf.find(10), uf.find(1));
});

t.test('a long chain stays correct (path halving, union by size)', async (t) => {
  const uf = new UnionFind();
  for (let i = 0; i < 100_000; i++) uf.union(i, i + 1);
  const c = uf.clusters();
  t.equal(c.length, 1);
  t.equal(c[0]?.length, 100_001);
});

t.test('pair keys are order-free', async (t) => {
  t.equal(pairKey(5, 3), pairKey(3, 5));
  t.equal(pairKey(3, 5), '3:5');
  t.not(pairKey(3, 5), pairKey(3, 50));
});

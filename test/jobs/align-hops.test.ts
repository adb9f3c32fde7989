/**
 * Neighbours of neighbours (src/jobs/align-hops.ts): a list that missed a document's nearest gets it from a
 * near neighbour's list, scored exactly, on both sides; the answer does not depend on the rows' order.
 */
import t from 'tap';
import { addNeighboursOfNeighbours, HOP_CHUNK } from '../../src/jobs/align-hops.js';
import type { Neighbours } from '../../src/jobs/align-search.js';

/** Documents on a line: the exact score of i and j is 1 - |x_i - x_j| / 100. */
const X = [0, 1, 2, 3, 10, 11, 12, 40, 41, 80];
const exact = (i: number, j: number) => 1 - Math.abs((X[i] as number) - (X[j] as number)) / 100;
let scored = 0;
const rescore = (i: number, js: Int32Array, out: Float32Array) => {
  js.forEach((j, x) => {
    if (j < 0) return;
    out[x] = exact(i, j);
    scored++;
  });
};

/** Lists of k = 3 built from `given` (document -> its found neighbours), scored exactly, best first. */
function lists(order: number[], given: Record<number, number[]>): Neighbours {
  const k = 3;
  const ids = new Int32Array(order.length * k).fill(-1);
  const scores = new Float32Array(order.length * k);
  order.forEach((i, r) => {
    const found = [...(given[i] ?? [])].sort((a, b) => exact(i, b) - exact(i, a)).slice(0, k);
    found.forEach((j, h) => {
      ids[r * k + h] = j;
      scores[r * k + h] = exact(i, j);
    });
  });
  return { docs: Int32Array.from(order), k, ids, scores };
}

const listOf = (found: Neighbours, i: number) => {
  const r = [...found.docs].indexOf(i);
  return [...found.ids.subarray(r * found.k, (r + 1) * found.k)];
};

// The search found a near document but not the nearest: 0 found 2 (not 1); 2's list holds 1 and 3.
const given: Record<number, number[]> = {
  0: [2, 4],
  1: [2],
  2: [1, 3],
  3: [2, 5],
  4: [5, 0],
  5: [6, 4],
  6: [5],
  7: [4],
  8: [9],
  9: [],
};

t.test('a list gains what its best neighbours found, both ways, best first', async (t) => {
  const found = lists(
    X.map((_, i) => i),
    given,
  );
  const added = await addNeighboursOfNeighbours(found, rescore);
  t.ok(added > 0);
  t.same(listOf(found, 0), [1, 2, 3], "0's nearest (1) came from 2's list, and 3 too");
  t.same(listOf(found, 4), [5, 6, 3], "6 from 5's list; 3 offered back from 3's own pass");
  t.same(listOf(found, 6), [5, 4, 3], '4 from 5, then 3 from 4');
  // 9 found nothing and nobody found 9: nothing to offer.
  t.same(listOf(found, 9), [-1, -1, -1]);
  for (const i of X.keys()) {
    const row = listOf(found, i).filter((j) => j >= 0);
    t.notOk(row.includes(i), `${i}: never itself`);
    t.equal(new Set(row).size, row.length, `${i}: no document twice`);
    const r = [...found.docs].indexOf(i);
    const s = [...found.scores.subarray(r * 3, r * 3 + row.length)];
    t.same(
      s,
      row.map((j) => Math.fround(exact(i, j))),
      `${i}: exact scores`,
    );
    t.same(
      s,
      [...s].sort((a, b) => b - a),
      `${i}: best first`,
    );
  }
});

t.test('the rows in another order give each document the same list', async (t) => {
  const a = lists(
    X.map((_, i) => i),
    given,
  );
  const order = [7, 3, 9, 0, 5, 1, 8, 2, 6, 4];
  const b = lists(order, given);
  await addNeighboursOfNeighbours(a, rescore);
  await addNeighboursOfNeighbours(b, rescore);
  for (const i of X.keys()) t.same(listOf(b, i), listOf(a, i), `${i}`);
});

t.test('lists that are already exact gain nothing', async (t) => {
  const all: Record<number, number[]> = {};
  for (const i of X.keys()) all[i] = [...X.keys()].filter((j) => j !== i);
  const found = lists(
    X.map((_, i) => i),
    all,
  );
  const before = found.ids.slice();
  scored = 0;
  t.equal(await addNeighboursOfNeighbours(found, rescore), 0);
  t.same(found.ids, before);
  t.ok(scored > 0, 'the candidates were scored');
});

t.test('the pass reports its progress, every chunk of rows and at the end', async (t) => {
  // More rows than two chunks: a chain, each found only its next.
  const n = 2 * HOP_CHUNK + 100;
  const k = 2;
  const ids = new Int32Array(n * k).fill(-1);
  for (let i = 0; i + 1 < n; i++) ids[i * k] = i + 1;
  const found = {
    docs: Int32Array.from({ length: n }, (_, i) => i),
    k,
    ids,
    scores: new Float32Array(n * k),
  };
  const seen: Array<[number, number]> = [];
  await addNeighboursOfNeighbours(
    found,
    (_, js, out) => {
      js.forEach((j, x) => {
        if (j >= 0) out[x] = 0.5;
      });
    },
    {
      onProgress: (d, total) => {
        seen.push([d, total]);
      },
    },
  );
  t.same(seen, [
    [HOP_CHUNK, n],
    [2 * HOP_CHUNK, n],
    [n, n],
  ]);
});

t.test('only the rows named are offered lists, and only the documents kept', async (t) => {
  const found = lists(
    X.map((_, i) => i),
    given,
  );
  // Row 0 alone, with document 1 (its nearest) not offered: 3 from 2's list, scored exactly.
  await addNeighboursOfNeighbours(found, rescore, { rows: [0], keep: (j) => j !== 1 });
  t.same(listOf(found, 0), [2, 3, 4]);
  t.same(listOf(found, 3), [2, 0, 5], 'the pair went to the other side too');
  t.same(listOf(found, 4), [5, 0, -1], 'a row not named kept its list');
});

/**
 * What lifts the partners an IVF search misses at 10^6 documents (issue #53): candidates from rare n-gram
 * lists (align-rare.ts), merged with the index's before the exact re-scoring, and reverse edges (a pair
 * found from one side offered to the other's list).
 */
import t from 'tap';
import { DocGrams } from '../../src/jobs/align-grams.js';
import { RareGrams } from '../../src/jobs/align-rare.js';
import { addReverse, DocIndex, type Neighbours } from '../../src/jobs/align-search.js';
import { Turns } from '../../src/turns.js';

const common = ['the report said that the market was open', 'the team said that the plan was set'];
async function grams(texts: string[]): Promise<DocGrams> {
  const g = new DocGrams();
  for (const text of texts) g.add(text);
  await g.finish();
  return g;
}

t.test(
  'documents sharing rare words are each other first candidates; common words file nothing',
  async (t) => {
    const texts = [
      'zymurgy quixotic fjord the report said that the market was open',
      'the team said that the plan was set quixotic zymurgy fjord',
      ...Array.from({ length: 40 }, (_, i) => `${common[i % 2]} ${i % 2 ? 'again' : 'today'}`),
    ];
    const g = await grams(texts);
    const rare = await RareGrams.build(g, { keys: 16, maxDf: 5 });
    const out = new Int32Array(4);
    const m0 = rare.candidates(0, out);
    t.ok(m0 >= 1, 'a candidate');
    t.equal(out[0], 1, 'doc 0: its rare twin first');
    t.notOk(out.subarray(0, m0).includes(0), 'never itself');
    t.ok(rare.candidates(1, out) > 0 && out[0] === 0, 'doc 1: doc 0 first');
    // The fillers share only grams in more than maxDf documents: no keys, no candidates.
    t.equal(rare.candidates(5, out), 0, 'a filler: nothing rare, nothing filed');
    // A bucket in one document pairs nothing: a lone rare word gives no candidate.
    const lone = await grams(['xylograph the report said', ...texts.slice(2)]);
    t.equal(
      (await RareGrams.build(lone, { keys: 16, maxDf: 5 })).candidates(0, out),
      0,
      'a word in one document only',
    );
  },
);

t.test("a document's keys are picked again at each call: the same candidates in any order", async (t) => {
  // Words shared by a few documents each (rare), beside common text: many lists, overlapping.
  const words = ['quill', 'zephyr', 'fjord', 'gizmo', 'jackal', 'vortex', 'plinth', 'brogue', 'cwm', 'kudzu'];
  const texts = Array.from({ length: 60 }, (_, i) =>
    [common[i % 2], words[i % 10], words[(i * 3 + 1) % 10], words[(i * 7 + 2) % 10]].join(' '),
  );
  const g = await grams(texts);
  const rare = await RareGrams.build(g, { keys: 8, maxDf: 20 });
  const run = (order: number[]) =>
    new Map(
      order.map((i) => {
        const out = new Int32Array(6);
        return [i, Array.from(out.subarray(0, rare.candidates(i, out)))] as const;
      }),
    );
  const ids = texts.map((_, i) => i);
  const forward = run(ids);
  const backward = run([...ids].reverse());
  t.same(backward, forward, 'the same lists, whatever was asked before');
  // Each candidate shares one of the document's keys.
  const keysOf = (i: number) => {
    const out = new Uint32Array(8);
    return new Set(out.subarray(0, g.rarest(i, 20, out)));
  };
  const shared = ids.every((i) =>
    (forward.get(i) ?? []).every((j) => [...keysOf(j)].some((b) => keysOf(i).has(b))),
  );
  t.ok(shared, 'every candidate shares a key');
  t.ok(
    ids.some((i) => (forward.get(i)?.length ?? 0) > 0),
    'candidates found',
  );
});

t.test('finish() and build() let the event loop go when owed a turn: the same rows and lists', async (t) => {
  const words = ['quill', 'zephyr', 'fjord', 'gizmo', 'jackal', 'vortex', 'plinth', 'brogue', 'cwm', 'kudzu'];
  const texts = Array.from(
    { length: 80 },
    (_, i) => `${common[i % 2]} ${words[i % 10]} ${words[(i * 3) % 10]}`,
  );
  // A turn owed after 0 ms: at every row; after a minute: never, so no turn is taken.
  const made = async (ms: number) => {
    let turns = 0;
    const count = () =>
      setImmediate(() => {
        turns++;
      });
    const g = new DocGrams();
    for (const text of texts) g.add(text);
    clearImmediate(count());
    let other = count();
    await g.finish(new Turns(ms));
    clearImmediate(other);
    other = count();
    const rare = await RareGrams.build(g, { keys: 8, maxDf: 20 }, new Turns(ms));
    clearImmediate(other);
    const lists = texts.map((_, i) => {
      const out = new Int32Array(6);
      return Array.from(out.subarray(0, rare.candidates(i, out)));
    });
    return {
      turns,
      rows: Array.from(
        g.project(
          texts.map((_, i) => i),
          32,
        ),
      ),
      lists,
    };
  };
  const eager = await made(0);
  const never = await made(60_000);
  t.equal(eager.turns, 2, 'the loop ran during both');
  t.equal(never.turns, 0, 'no turn when none is owed');
  t.same(eager.rows, never.rows, 'the same weighted rows');
  t.same(eager.lists, never.lists, 'the same candidates');
});

t.test('rarest(): buckets in 2..maxDf documents, rarest first', async (t) => {
  const g = await grams(['abc xyz', 'abc xyz', 'abc', 'abc', 'abc']);
  const out = new Uint32Array(64);
  const m = g.rarest(0, 4, out);
  t.ok(m > 0, 'xyz grams are keys');
  const doc3 = g.rarest(2, 4, new Uint32Array(64));
  t.equal(doc3, 0, '"abc" is in 5 documents: above maxDf 4, no key');
  t.equal(g.rarest(0, 4, new Uint32Array(2)), 2, 'at most out.length');
});

function lists(k: number, rows: Array<Array<[number, number]>>): Neighbours {
  const n = rows.length;
  const ids = new Int32Array(n * k).fill(-1);
  const scores = new Float32Array(n * k);
  rows.forEach((row, r) => {
    row.forEach(([j, s], h) => {
      ids[r * k + h] = j;
      scores[r * k + h] = s;
    });
  });
  return { docs: Int32Array.from({ length: n }, (_, r) => r), k, ids, scores };
}

t.test('addReverse: a pair found from one side joins the other side, in order, once', async (t) => {
  const found = lists(2, [
    [[1, 0.9]],
    [
      [2, 0.95],
      [3, 0.5],
    ],
    [[1, 0.95]],
    [[1, 0.5]],
  ]);
  const added = addReverse(found);
  t.same(Array.from(found.ids.subarray(2, 4)), [2, 0], "row 1: 0 (0.9) takes 3's place (0.5)");
  t.same(Array.from(found.scores.subarray(2, 4)), [Math.fround(0.95), Math.fround(0.9)]);
  t.same(Array.from(found.ids.subarray(0, 2)), [1, -1], 'row 0 unchanged: 1 is there already');
  t.ok(added >= 1, `entries added (${added})`);
  t.equal(addReverse(found), 0, 'a second pass adds nothing');
  const kept = lists(2, [[[1, 0.9]], [], [[1, 0.8]]]);
  addReverse(kept, (i) => i !== 2);
  t.same(Array.from(kept.ids.subarray(2, 4)), [0, -1], 'row 1 gets 0, not 2 (kept out)');
});

t.test(
  'neighbours(): extra candidates are re-scored with the index and excluded ones stay out',
  async (t) => {
    // Four 2-d documents; the projection ranks 1 nearest to 0, the exact score prefers 3 (the extra source's).
    const v = [
      [1, 0],
      [0.9, 0.1],
      [0, 1],
      [-1, 0],
    ];
    const vectors = {
      dim: 2,
      rows: (ids: ArrayLike<number>) => Float32Array.from(Array.from(ids).flatMap((i) => v[i] as number[])),
    };
    const index = await DocIndex.open(vectors, 4);
    t.teardown(() => index.close());
    const exact = (i: number, j: number) => (i + j === 3 ? 0.99 : 0.1);
    const rescore = (i: number, js: Int32Array, out: Float32Array) => {
      js.forEach((j, x) => {
        if (j >= 0) out[x] = exact(i, j);
      });
    };
    const more = {
      depth: 2,
      candidates: (i: number, out: Int32Array) => {
        out[0] = 3 - i;
        return 1;
      },
    };
    const docs = Int32Array.from([0]);
    const plain = await index.neighbours(docs, 1, { rescore, depth: 1 });
    t.equal(plain.ids[0], 1, 'without: the projection nearest');
    const withMore = await index.neighbours(docs, 1, { rescore, depth: 1, more });
    t.equal(withMore.ids[0], 3, 'with: the extra candidate, scored exactly');
    t.equal(withMore.scores[0], Math.fround(0.99));
    const exclude = new Uint8Array(1);
    exclude[0] = 1 << 3;
    const excluded = await index.neighbours(docs, 1, { rescore, depth: 1, more, exclude });
    t.equal(excluded.ids[0], 1, 'an excluded extra candidate never comes back');
  },
);

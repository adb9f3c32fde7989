/**
 * Scoring on a worker thread (src/jobs/align-score.ts): the thread reads the TF-IDF rows and mean embeddings
 * in shared memory and scores exactly what this thread does, and the pass over neighbours' lists gives the
 * same lists whether half its rows are scored there or all here.
 */
import t from 'tap';
import { DocGrams } from '../../src/jobs/align-grams.js';
import { addNeighboursOfNeighbours } from '../../src/jobs/align-hops.js';
import { Int8Rows } from '../../src/jobs/align-hybrid.js';
import { pairScore, ScoreThread, scoreRows } from '../../src/jobs/align-score.js';
import type { Neighbours } from '../../src/jobs/align-search.js';

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const rand = seeded(11);
const WORDS =
  'storm harbour boats pier orchestra symphony bridge traffic council budget lanes spring river'.split(' ');
const N = 300;
const DIM = 16;
const texts = Array.from({ length: N }, (_, i) =>
  Array.from({ length: 6 + (i % 7) }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' '),
);
const grams = new DocGrams();
for (const text of texts) grams.add(text);
await grams.finish();
const floats = Float32Array.from({ length: N * DIM }, () => rand() - 0.5);
for (let i = 0; i < N; i++) {
  const row = floats.subarray(i * DIM, (i + 1) * DIM);
  const norm = Math.hypot(...row);
  for (let d = 0; d < DIM; d++) row[d] = (row[d] as number) / norm;
}
const means = Int8Rows.from(floats, DIM);

/** Lists of k = 8: each document's first candidates drawn at random, scored by `score`, best first. */
function lists(score: ReturnType<typeof pairScore>): Neighbours {
  const k = 8;
  const pick = seeded(5);
  const ids = new Int32Array(N * k).fill(-1);
  const scores = new Float32Array(N * k);
  for (let i = 0; i < N; i++) {
    const js = Int32Array.from(new Set(Array.from({ length: 4 }, () => Math.floor(pick() * N))).values());
    const found = [...js].filter((j) => j !== i);
    const out = new Float32Array(found.length);
    score(i, Int32Array.from(found), out);
    const order = found.map((j, x) => [j, out[x] as number] as const).sort((a, b) => b[1] - a[1]);
    order.forEach(([j, s], h) => {
      ids[i * k + h] = j;
      scores[i * k + h] = s;
    });
  }
  return { docs: Int32Array.from({ length: N }, (_, i) => i), k, ids, scores };
}

for (const hybrid of [false, true]) {
  const name = hybrid ? 'hybrid' : 'tfidf';
  const score = pairScore(grams, hybrid ? means : undefined);
  const share = () => ({ grams: grams.share(), means: hybrid ? means.share() : undefined });

  t.test(`${name}: the thread scores as this thread does`, async (t) => {
    const width = 5;
    const is = Int32Array.from({ length: N }, (_, i) => i);
    const js = Int32Array.from({ length: N * width }, (_, x) =>
      x % width === 4 ? -1 : Math.floor(rand() * N),
    );
    js.fill(-1, 0, width);
    const rows = { is, js, width };
    const thread = await ScoreThread.start(share());
    try {
      const there = await thread.score(rows);
      const here = scoreRows(score, rows);
      t.same([...there], [...here], 'the same floats');
      t.same([...here.subarray(0, width)], [-2, -2, -2, -2, -2], 'a row with no candidates is not scored');
      t.ok(here.some((s) => s > 0.5));
    } finally {
      await thread.close();
    }
    await t.rejects(thread.score(rows), /the model is closed/, 'a closed thread says so');
  });

  t.test(`${name}: the pass gives the same lists with half its rows scored on the thread`, async (t) => {
    const alone = lists(score);
    const shared = lists(score);
    const a = await addNeighboursOfNeighbours(alone, score);
    const b = await addNeighboursOfNeighbours(shared, score, { share, threadFrom: 0 });
    t.ok(a > 0, `${a} entries added`);
    t.equal(b, a);
    t.same([...shared.ids], [...alone.ids]);
    t.same([...shared.scores], [...alone.scores]);
  });
}

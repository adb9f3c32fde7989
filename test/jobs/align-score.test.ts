/**
 * The exact pair scores (src/jobs/align-score.ts): in C++ (GramScorer) they are bit for bit the JavaScript
 * reference's on real text, malformed input is an error and not a read out of bounds; a worker thread reads
 * the TF-IDF rows and mean embeddings in shared memory and scores exactly what this thread does, and the pass
 * over neighbours' lists gives the same lists whether half its rows are scored there or all here.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { DocGrams } from '../../src/jobs/align-grams.js';
import { addNeighboursOfNeighbours } from '../../src/jobs/align-hops.js';
import { Int8Rows } from '../../src/jobs/align-hybrid.js';
import {
  pairScore,
  referenceScore,
  type ScoreShare,
  ScoreThread,
  scoreRows,
} from '../../src/jobs/align-score.js';
import type { Neighbours } from '../../src/jobs/align-search.js';
import { GramScorer } from '../../src/native/index.js';
import { sharedData } from '../helpers/shared-data.js';

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
const means = randomMeans(N, DIM, rand);

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

/** n unit rows of dim random floats as int8 rows. */
function randomMeans(n: number, dim: number, next: () => number): Int8Rows {
  const m = Float32Array.from({ length: n * dim }, () => next() - 0.5);
  for (let i = 0; i < n; i++) {
    const row = m.subarray(i * dim, (i + 1) * dim);
    const norm = Math.hypot(...row);
    for (let d = 0; d < dim; d++) row[d] = (row[d] as number) / norm;
  }
  return Int8Rows.from(m, dim);
}

const mrpc = sharedData('mrpc/train.tsv');
t.test(
  'in C++ the scores are the JavaScript reference bit for bit, on real text',
  { skip: mrpc.skip },
  async (t) => {
    // Documents of 2-5 MRPC sentences (news: long rows, counts above 1, gaps of every length); some repeat a
    // sentence of another, so scores near 1 are among them too.
    const lines = readFileSync(mrpc.path, 'utf8').split('\n').slice(1, 4_001);
    const sentences = lines.flatMap((l) => l.split('\t').slice(3, 5));
    const next = seeded(3);
    const pick = () => sentences[Math.floor(next() * sentences.length)] as string;
    const n = 2_000;
    const real = new DocGrams();
    for (let d = 0; d < n; d++) real.add(Array.from({ length: 2 + (d % 4) }, pick).join(' '));
    await real.finish();
    const realMeans = randomMeans(n, 384, next);
    let pairs = 0;
    let high = 0;
    for (const hybrid of [false, true]) {
      const m = hybrid ? realMeans : undefined;
      const native = pairScore({ grams: real.share(), means: m?.share() });
      const reference = referenceScore(real, m);
      const width = 40;
      const js = new Int32Array(width);
      const [a, b] = [new Float32Array(width), new Float32Array(width)];
      for (let i = 0; i < n; i++) {
        for (let x = 0; x < width; x++) js[x] = x === 7 ? -1 : x === 0 ? i : Math.floor(next() * n);
        a.fill(-2);
        b.fill(-2);
        native(i, js, a);
        reference(i, js, b);
        const same = a.every((v, x) => Object.is(v, b[x]));
        if (!same) {
          t.same([...a], [...b], `row ${i} (${hybrid ? 'hybrid' : 'tfidf'})`);
          return;
        }
        pairs += width - 1;
        high += a.filter((v) => v > 0.5).length;
        if (a[7] !== -2) t.fail('a -1 candidate was scored');
      }
    }
    t.pass(`${pairs} pairs the same, ${high} of them above 0.5 (each row with itself among them)`);
  },
);

t.test('malformed rows and candidates out of range are errors, not reads out of bounds', async (t) => {
  const s = grams.share();
  const scorer = GramScorer.create(s.rows, s.idf, s.invNorm);
  const out = new Float32Array(2);
  t.throws(
    () => scorer.score(0, Int32Array.from([N]), out),
    { code: 'BAD_INPUT' },
    'a candidate past the rows',
  );
  t.throws(
    () => scorer.score(-1, Int32Array.from([1]), out),
    { code: 'BAD_INPUT' },
    'a row before the first',
  );
  t.throws(() => scorer.score(0, Int32Array.from([1, 2]), new Float32Array(1)), { code: 'BAD_INPUT' });
  // A row whose last varint runs past its end, one whose end is past its chunk, and a gap of 0.
  // Row 0 is one bucket (a gap of 2, count 1); row 1 is each of the malformed ones.
  const chunk = Uint8Array.from([0x04, 0x85, 0x81, 0x00]);
  const view = (start: number, end: number) => ({
    countBits: s.rows.countBits,
    chunks: [chunk],
    chunkOf: new Uint16Array(2),
    start: Uint32Array.from([0, start]),
    end: Uint32Array.from([1, end]),
  });
  const good = GramScorer.create(view(0, 1), s.idf, Float32Array.from([1, 1]));
  good.score(0, Int32Array.from([0]), out);
  t.ok((out[0] as number) > 0, 'a well-formed row scores');
  for (const [start, end, why] of [
    [1, 3, 'a varint cut off'],
    [1, 9, 'an end past its chunk'],
    [3, 4, 'a gap of 0'],
  ] as const) {
    const bad = GramScorer.create(view(start, end), s.idf, new Float32Array(2));
    t.throws(() => bad.score(1, Int32Array.from([0]), out), { code: 'BAD_INPUT' }, why);
    t.throws(() => bad.score(0, Int32Array.from([1]), out), { code: 'BAD_INPUT' }, `${why}, as a candidate`);
  }
  t.throws(() => GramScorer.create({ ...s.rows, countBits: 0 }, s.idf, s.invNorm), { code: 'BAD_INPUT' });
  t.throws(
    () => GramScorer.create(s.rows, s.idf.subarray(1), s.invNorm),
    { code: 'BAD_INPUT' },
    'idf too short',
  );
  t.throws(
    () => GramScorer.create(s.rows, s.idf, s.invNorm, { ...means.share(), dim: 10_000 }),
    { code: 'BAD_INPUT' },
    'means that do not cover the rows',
  );
});

for (const hybrid of [false, true]) {
  const name = hybrid ? 'hybrid' : 'tfidf';
  const share = (): ScoreShare => ({ grams: grams.share(), means: hybrid ? means.share() : undefined });
  const score = pairScore(share());

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

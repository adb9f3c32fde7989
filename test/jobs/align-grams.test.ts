/**
 * Document TF-IDF at scale (issue #53): the packed, hashed rows score pairs as the exact sparse TF-IDF does
 * (CharNgramTfidf, which matches scikit-learn), and their projection keeps a document nearest its paraphrase.
 */
import t from 'tap';
import { DocGrams } from '../../src/jobs/align-grams.js';
import { docGrams } from '../../src/jobs/align-vectors.js';
import { CharNgramTfidf } from '../../src/text/index.js';

const docs = [
  'A powerful storm closed the harbour for three days. Fishing boats stayed tied to the pier.',
  'The harbour was shut for three days after a strong storm. The fishing fleet remained moored.',
  'The orchestra played a new symphony on Friday night. The audience stood and applauded.',
  'Engineers reopened the old bridge after a year of repairs. Traffic returned on Monday.',
  'Der Sturm schloss den Hafen für drei Tage. Die Fischerboote blieben am Pier. 🌊🌊',
  'The city council approved a budget for new bicycle lanes; work begins in spring.',
  '',
];

t.test('cosines equal the exact sparse TF-IDF (sklearn char_wb 2-4) up to hashing', async (t) => {
  const grams = new DocGrams();
  for (const d of docs) grams.add(d);
  await grams.finish();
  const exact = new CharNgramTfidf().fit(docs);
  let worst = 0;
  for (let i = 0; i < docs.length; i++) {
    for (let j = 0; j < docs.length; j++) {
      worst = Math.max(
        worst,
        Math.abs(grams.cosine(i, j) - exact.similarity(docs[i] as string, docs[j] as string)),
      );
    }
  }
  t.ok(worst < 1e-5, `largest difference ${worst}`);
  // the batched form (one row against its candidates, -1 skipped) gives the same
  const out = new Float32Array(4).fill(9);
  grams.cosines(0, Int32Array.from([1, -1, 2, 4]), out);
  t.ok(Math.abs((out[0] as number) - grams.cosine(0, 1)) < 1e-6, 'cosines = cosine');
  t.equal(out[1], 9, 'a -1 candidate is left alone');
  t.ok(Math.abs((out[3] as number) - grams.cosine(0, 4)) < 1e-6);
  t.ok(Math.abs(grams.cosine(0, 0) - 1) < 1e-6, 'a document is its own best match');
  t.equal(grams.cosine(0, 6), 0, 'an empty document scores 0');
});

t.test('the projection ranks the paraphrase first', async (t) => {
  const grams = new DocGrams();
  for (const d of docs) grams.add(d);
  await grams.finish();
  const dim = 256;
  const p = grams.project([0, 1, 2, 3, 5], dim);
  const dot = (a: number, b: number) => {
    let s = 0;
    for (let x = 0; x < dim; x++) s += (p[a * dim + x] as number) * (p[b * dim + x] as number);
    return s;
  };
  const others = [2, 3, 4].map((r) => dot(0, r));
  t.ok(
    others.every((s) => dot(0, 1) > s),
    `story ~ retelling ${dot(0, 1).toFixed(3)} > others ${others.map((s) => s.toFixed(3))}`,
  );
  t.throws(() => grams.add('late'), /after finish/);
});

t.test('counted on a worker thread, the rows and the digest are those counted here', async (t) => {
  const texts = Array.from({ length: 9_000 }, (_, i) => `${docs[i % docs.length]} ${i} ${(i * 7919) % 1000}`);
  const set = { count: texts.length, id: String, text: (r: number) => texts[r] as string, meta: () => ({}) };
  const seen: number[] = [];
  const here = await docGrams(set, undefined, Number.POSITIVE_INFINITY);
  const there = await docGrams(set, (_stage, done) => seen.push(done), 0);
  t.equal(there.digest, here.digest);
  t.equal(there.grams.count, texts.length);
  const js = Int32Array.from([1, 2, 4_096, 8_999, -1]);
  for (const i of [0, 1, 4_095, 4_096, 8_999]) {
    const [a, b] = [new Float32Array(5), new Float32Array(5)];
    here.grams.cosines(i, js, a);
    there.grams.cosines(i, js, b);
    t.same([...b], [...a], `row ${i}`);
  }
  t.same([...there.grams.project([0, 8_999], 32)], [...here.grams.project([0, 8_999], 32)]);
  t.same(seen, [4_096, 8_192], 'progress every slice of 4,096');
});

/**
 * docs align --method hybrid (src/jobs/align-hybrid.ts): candidates searched and scored by the mean of their
 * exact TF-IDF cosine and their documents' mean-embedding cosine (kept as int8 rows, one scale each).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { prng } from '../../src/index/index.js';
import { DocGrams } from '../../src/jobs/align-grams.js';
import { hybridScore, Int8Rows, jointVectors } from '../../src/jobs/align-hybrid.js';
import { alignOptionsSchema } from '../../src/jobs/align-options.js';
import { alignDocumentSet, type DocumentSet } from '../../src/jobs/align-pairs.js';
import { madeUpDocuments } from '../helpers/made-up-documents.js';

const DIM = 384;

/** `count` random unit rows; rows 2p and 2p+1 close to each other when `twins`. */
function unitRows(count: number, seed: number, twins = false): Float32Array {
  const rand = prng(seed);
  const m = new Float32Array(count * DIM);
  for (let r = 0; r < count; r++) {
    for (let x = 0; x < DIM; x++) {
      const own = rand() - 0.5;
      m[r * DIM + x] = twins && r % 2 === 1 ? (m[(r - 1) * DIM + x] as number) + own * 0.3 : own;
    }
    let n = 0;
    for (let x = 0; x < DIM; x++) n += (m[r * DIM + x] as number) ** 2;
    for (let x = 0; x < DIM; x++) m[r * DIM + x] = (m[r * DIM + x] as number) / Math.sqrt(n);
  }
  return m;
}

const dot = (m: Float32Array, r: number, s: number) => {
  let sum = 0;
  for (let x = 0; x < DIM; x++) sum += (m[r * DIM + x] as number) * (m[s * DIM + x] as number);
  return sum;
};

t.test('int8 rows keep the dot product within 0.005', async (t) => {
  const m = unitRows(200, 3, true);
  const rows = Int8Rows.from(m, DIM);
  let worst = 0;
  for (let r = 0; r < 200; r++) {
    for (const s of [r, (r + 1) % 200, (r * 7 + 3) % 200])
      worst = Math.max(worst, Math.abs(rows.dot(r, s) - dot(m, r, s)));
  }
  t.ok(worst < 0.005, `worst error ${worst}`);
  t.equal(Int8Rows.from(new Float32Array(DIM), DIM).dot(0, 0), 0, 'a zero row scores 0');
});

t.test('the hybrid score is the mean of both cosines; empty slots stay as they are', async (t) => {
  const m = unitRows(4, 5);
  const rows = Int8Rows.from(m, DIM);
  const out = new Float32Array(3).fill(-2);
  hybridScore((_, js, o) => {
    js.forEach((j, x) => {
      if (j >= 0) o[x] = 0.2 * j;
    });
  }, rows)(0, Int32Array.from([1, 2, -1]), out);
  t.ok(Math.abs((out[0] as number) - (0.2 + dot(m, 0, 1)) / 2) < 0.005);
  t.ok(Math.abs((out[1] as number) - (0.4 + dot(m, 0, 2)) / 2) < 0.005);
  t.equal(out[2], -2);
});

// 400 made-up documents in 200 twins (words alike), and means that make only the first 100 twins close.
const N = 400;
const texts = madeUpDocuments(N, 11).map((w) => w.join(' '));
for (let r = 1; r < N; r += 2)
  texts[r] = `${texts[r - 1]} ${madeUpDocuments(1, 100 + r)[0]
    ?.slice(0, 3)
    .join(' ')}`;
const close = unitRows(200, 9, true);
const far = unitRows(200, 13);
const means = new Float32Array(N * DIM);
means.set(close);
means.set(far, 200 * DIM);
const set = (withMeans: boolean): DocumentSet => ({
  count: N,
  id: (r) => `d${r}`,
  text: (r) => texts[r] as string,
  meta: () => ({}),
  means: withMeans
    ? async function* () {
        // Two chunks, as the index's documents come (align.ts reads 4,096 at a time).
        yield { dim: DIM, rows: means.subarray(0, 150 * DIM) };
        yield { dim: DIM, rows: means.subarray(150 * DIM) };
      }
    : undefined,
});

t.test(
  'docs align --method hybrid scores each pair by the mean of its TF-IDF and embedding cosines',
  async (t) => {
    const band = { min: -1, max: 1.01, autoBand: false, partners: 1, dim: 64 };
    const hybrid = await alignDocumentSet(set(true), alignOptionsSchema.parse({ ...band, method: 'hybrid' }));
    const grams = new DocGrams();
    for (const text of texts) grams.add(text);
    await grams.finish();
    t.ok(hybrid.pairs.length >= 190, `${hybrid.pairs.length} pairs`);
    for (const p of hybrid.pairs.slice(0, 50)) {
      const [a, b] = [Number(p.a.slice(1)), Number(p.b.slice(1))];
      t.ok(Math.abs(p.score - (grams.cosine(a, b) + dot(means, a, b)) / 2) < 0.005, `${p.a} ${p.b}`);
    }
    // The twins whose means agree rank above those whose means do not, words alike in both.
    const rank = new Map(hybrid.pairs.map((p, x) => [Number(p.a.slice(1)), x]));
    const first = [...rank].filter(([a]) => a < 200).map(([, x]) => x);
    const second = [...rank].filter(([a]) => a >= 200).map(([, x]) => x);
    t.ok(Math.max(...first) < Math.min(...second), 'every twin with close means ranks first');
  },
);

t.test('joint search vectors: their inner product estimates the hybrid score', async (t) => {
  const grams = new DocGrams();
  for (const text of texts) grams.add(text);
  await grams.finish();
  const rows = Int8Rows.from(means, DIM);
  const joint = jointVectors((ids, dim) => grams.project(ids, dim), 512, rows);
  t.equal(joint.dim, 128 + DIM, 'the projection takes what 512 leaves beside the embeddings');
  t.equal(jointVectors((ids, dim) => grams.project(ids, dim), 256, rows).dim, 64 + DIM, 'at least 64 of it');
  const v = (await joint.rows([0, 1, 300, 301])) as Float32Array;
  const ip = (a: number, b: number) => {
    let sum = 0;
    for (let x = 0; x < joint.dim; x++)
      sum += (v[a * joint.dim + x] as number) * (v[b * joint.dim + x] as number);
    return sum;
  };
  const hybrid = (a: number, b: number) => (grams.cosine(a, b) + dot(means, a, b)) / 2;
  // The projection's noise, halved: 128 dimensions estimate a cosine within ~0.1, so the score within ~0.05.
  t.ok(Math.abs(ip(0, 1) - hybrid(0, 1)) < 0.1, `twins ${ip(0, 1)} vs ${hybrid(0, 1)}`);
  t.ok(Math.abs(ip(2, 3) - hybrid(300, 301)) < 0.1, `far means ${ip(2, 3)} vs ${hybrid(300, 301)}`);
  t.ok(Math.abs(ip(0, 0) - 1) < 0.1, `a row with itself ${ip(0, 0)}`);
});

t.test(
  'docs align --method hybrid searches jointly by default, and finds the pairs re-scoring finds',
  async (t) => {
    const band = { min: -1, max: 1.01, autoBand: false, partners: 1, dim: 512 };
    const o = alignOptionsSchema.parse({ ...band, method: 'hybrid' });
    const work = mkdtempSync(join(tmpdir(), 'paramine-align-hybrid-'));
    t.teardown(() => rmSync(work, { recursive: true, force: true }));
    const joint = await alignDocumentSet(set(true), o, { jointSearch: true, work });
    // The default is the joint search: it resumes the joint run's work, which the re-scoring run cannot use.
    const byDefault = await alignDocumentSet(set(true), o, { work });
    t.equal(byDefault.resumed?.index, true, "the default read the joint search's document index back");
    const plain = await alignDocumentSet(set(true), o, { jointSearch: false, work });
    t.equal(plain.resumed?.index, false, 're-scoring TF-IDF candidates builds its own');
    const key = (p: { a: string; b: string; score: number }) => `${p.a}~${p.b} ${p.score}`;
    t.same(joint.pairs.slice(0, 150).map(key), plain.pairs.slice(0, 150).map(key));
  },
);

t.test('without kept embeddings, hybrid says how to get them or what to use instead', async (t) => {
  await t.rejects(alignDocumentSet(set(false), alignOptionsSchema.parse({ method: 'hybrid' })), {
    code: 'BAD_INPUT',
    message: /vectors\.f16.*--method tfidf/,
  });
});

t.test('what the documents were read from is released once, after every text and mean is read', async (t) => {
  let released = 0;
  let readAfter = 0;
  const base = set(true);
  const watched: DocumentSet = {
    ...base,
    text: (r) => {
      if (released > 0) readAfter++;
      return base.text(r);
    },
    means: async function* (progress) {
      for await (const chunk of base.means?.(progress) ?? []) {
        if (released > 0) readAfter++;
        yield chunk;
      }
    },
    release: async () => {
      released++;
    },
  };
  const o = alignOptionsSchema.parse({
    min: 0.1,
    max: 1.01,
    autoBand: false,
    partners: 1,
    dim: 64,
    method: 'hybrid',
  });
  const found = await alignDocumentSet(watched, o);
  t.ok(found.pairs.length > 0);
  t.equal(released, 1, 'released once');
  t.equal(readAfter, 0, 'nothing read after it');
});

/**
 * The sentence match, method hybrid's last step (src/jobs/align-sentences.ts): each list's best candidates
 * scored by the mean of their hybrid score and how well their sentences pair up.
 */
import t from 'tap';
import { prng } from '../../src/index/index.js';
import { DocGrams } from '../../src/jobs/align-grams.js';
import { alignOptionsSchema } from '../../src/jobs/align-options.js';
import { alignDocumentSet, type DocumentSet } from '../../src/jobs/align-pairs.js';
import {
  MATCH_CHUNK,
  matchSentences,
  roomFor,
  type SentenceRows,
  sentenceMatch,
} from '../../src/jobs/align-sentences.js';
import { madeUpDocuments } from '../helpers/made-up-documents.js';

const DIM = 32;

function unit(v: number[]): number[] {
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / n);
}

function randomUnit(rand: () => number): number[] {
  return unit(Array.from({ length: DIM }, () => rand() - 0.5));
}

/** Documents as lists of sentence vectors, in one SentenceRows. */
function rowsOf(docs: number[][][]): SentenceRows {
  const starts = new Int32Array(docs.length + 1);
  docs.forEach((d, x) => {
    starts[x + 1] = (starts[x] as number) + d.length;
  });
  return { dim: DIM, starts, rows: Float32Array.from(docs.flat(2)) };
}

t.test(
  'the match: 1 for the same sentences, symmetric, and low for the same mean made of other sentences',
  async (t) => {
    const rand = prng(7);
    const [u, v, w] = [randomUnit(rand), randomUnit(rand), randomUnit(rand)];
    const mid = unit(u.map((x, i) => x + (v[i] as number)));
    const s = rowsOf([[u, v, w], [w, u, v], [mid, mid], [u, v], []]);
    t.ok(Math.abs(sentenceMatch(s, 0, 1) - 1) < 1e-5, 'the same sentences in another order: 1');
    t.equal(sentenceMatch(s, 0, 3), sentenceMatch(s, 3, 0), 'either side first: the same score');
    // {u, v} and {mid, mid} have the same mean embedding (cosine 1); their sentences pair up far worse.
    t.ok(sentenceMatch(s, 3, 2) < 0.75, `the same mean, no sentence shared: ${sentenceMatch(s, 3, 2)}`);
    t.ok(sentenceMatch(s, 0, 3) > sentenceMatch(s, 0, 2), 'two of three sentences shared beats none');
    t.equal(sentenceMatch(s, 0, 4), 0, 'a document without sentences matches nothing');
  },
);

// 300 made-up documents; 2p and 2p+1 share their words (TF-IDF twins). For p < 50 the twins also share
// their sentences' embeddings; for the rest every sentence is its own, though the means agree as closely.
const N = 300;
const words = madeUpDocuments(N, 5);
for (let r = 1; r < N; r += 2) words[r] = [...(words[r - 1] as string[]).slice(0, 10), 'zz', 'qq'];
const texts = words.map((w) => w.join(' '));
const rand = prng(11);
const sentences: number[][][] = [];
for (let r = 0; r < N; r += 2) {
  const own = [randomUnit(rand), randomUnit(rand)];
  const near = (x: number[]) => unit(x.map((y) => y + 0.1 * (rand() - 0.5)));
  sentences.push(own);
  if (r < 100) sentences.push(own.map(near));
  else {
    // The twin's sentences are the halves' mixture: the same mean, no sentence alike.
    const mid = unit((own[0] as number[]).map((x, i) => x + ((own[1] as number[])[i] as number)));
    sentences.push([mid, near(mid)]);
  }
}
const mean = (d: number[][]) =>
  unit((d[0] as number[]).map((_, i) => d.reduce((s, x) => s + (x[i] as number), 0)));
const means = Float32Array.from(sentences.flatMap(mean));

/** The documents above, and `copies` more that copy document 0 (its text and sentences). */
function set(
  meta: (r: number) => Record<string, unknown> = () => ({}),
  copies = 0,
): DocumentSet & { asked: number[] } {
  const asked: number[] = [];
  const of = (r: number) => (r < N ? r : 0);
  const rows = new Float32Array((N + copies) * DIM);
  for (let r = 0; r < N + copies; r++) rows.set(means.subarray(of(r) * DIM, (of(r) + 1) * DIM), r * DIM);
  return {
    asked,
    count: N + copies,
    id: (r) => `d${r}`,
    text: (r) => texts[of(r)] as string,
    meta,
    means: async function* () {
      yield { dim: DIM, rows };
    },
    sentences: async (rows) => {
      asked.push(...rows);
      return rowsOf(rows.map((r) => sentences[of(r)] as number[][]));
    },
  };
}

const band = { min: -1, max: 1.01, autoBand: false, partners: 1, dim: 64, method: 'hybrid' } as const;

t.test('docs align --method hybrid keeps the mean of the hybrid score and the sentence match', async (t) => {
  const docs = set();
  const a = await alignDocumentSet(docs, alignOptionsSchema.parse(band));
  t.ok(docs.asked.length > 0, 'the sentences were read');
  const grams = new DocGrams();
  for (const text of texts) grams.add(text);
  await grams.finish();
  const all = rowsOf(sentences);
  const dot = (a: number, b: number) => {
    let s = 0;
    for (let x = 0; x < DIM; x++) s += (means[a * DIM + x] as number) * (means[b * DIM + x] as number);
    return s;
  };
  t.ok(a.pairs.length >= 140, `${a.pairs.length} pairs`);
  for (const p of a.pairs.slice(0, 40)) {
    const [x, y] = [Number(p.a.slice(1)), Number(p.b.slice(1))];
    const hybrid = (grams.cosine(x, y) + dot(x, y)) / 2;
    const want = (hybrid + sentenceMatch(all, x, y)) / 2;
    t.ok(Math.abs(p.score - want) < 0.01, `${p.a} ${p.b}: ${p.score} vs ${want}`);
  }
  // Words and means alike in every twin: only the twins whose sentences pair up rank first.
  const rank = new Map(a.pairs.map((p, x) => [Math.min(Number(p.a.slice(1)), Number(p.b.slice(1))), x]));
  const shared = [...rank].filter(([d]) => d < 100).map(([, x]) => x);
  const mixed = [...rank].filter(([d]) => d >= 100).map(([, x]) => x);
  t.equal(shared.length, 50, 'every twin sharing sentences is paired');
  t.ok(Math.max(...shared) < Math.min(...mixed), 'the twins that share sentences rank above the rest');
  // Each list keeps its best few only, and a pair's score is the same from either side.
  const nearest = a.nearest;
  if (nearest === undefined) throw new Error('no lists');
  const score = new Map<string, number>();
  nearest.docs.forEach((i, r) => {
    for (let h = 0; h < nearest.k; h++) {
      const j = nearest.ids[r * nearest.k + h] as number;
      if (j < 0) continue;
      const key = `${Math.min(i, j)}~${Math.max(i, j)}`;
      const s = nearest.scores[r * nearest.k + h] as number;
      if (score.has(key)) t.ok(Math.abs((score.get(key) as number) - s) < 1e-6, `${key} alike both ways`);
      score.set(key, s);
    }
  });
});

t.test('the match reads only candidates the scope allows, and never for tfidf', async (t) => {
  // --differ side: even documents on one side, odd on the other; twins 2p, 2p+1 differ, so they still pair.
  const docs = set((r) => ({ side: r % 2 }));
  const a = await alignDocumentSet(docs, alignOptionsSchema.parse({ ...band, differ: ['side'] }));
  for (const p of a.pairs) t.not(Number(p.a.slice(1)) % 2, Number(p.b.slice(1)) % 2, `${p.a} ${p.b}`);
  t.ok(a.pairs.length >= 140, `${a.pairs.length} pairs`);
  const tfidf = set();
  await alignDocumentSet(tfidf, alignOptionsSchema.parse({ ...band, method: 'tfidf' }));
  t.same(tfidf.asked, [], 'tfidf reads no sentence');
});

t.test(
  'near copies: the lists searched again without them are matched again, by the same score',
  async (t) => {
    // d300 and d301 copy d0, so d1's list (d0's twin) held copies and is searched and matched again.
    const a = await alignDocumentSet(set(undefined, 2), alignOptionsSchema.parse({ ...band, max: 0.999 }));
    t.same(
      a.copies.map((c) => [c.doc, ...c.copies].sort()),
      [['d0', 'd300', 'd301']],
      'one group of copies',
    );
    const grams = new DocGrams();
    for (let r = 0; r < N + 2; r++) grams.add(texts[r < N ? r : 0] as string);
    await grams.finish();
    const all = rowsOf(sentences);
    const twin = a.pairs.find((p) => [p.a, p.b].sort().join('~') === 'd0~d1');
    if (twin === undefined) throw new Error(`no pair d0~d1 in ${a.pairs.length}`);
    let dot = 0;
    for (let x = 0; x < DIM; x++) dot += (means[x] as number) * (means[DIM + x] as number);
    const want = ((grams.cosine(0, 1) + dot) / 2 + sentenceMatch(all, 0, 1)) / 2;
    t.ok(Math.abs(twin.score - want) < 0.01, `d0~d1 ${twin.score} vs ${want}`);
  },
);

t.test(
  'the match reads the next chunk while this one is matched, and keeps each list its best four',
  async (t) => {
    const rand = prng(11);
    const n = 2500;
    const k = 6;
    // Documents of 0..5 sentences; each list holds up to k random others (-1 after), scores falling.
    const docsSentences = Array.from({ length: n }, () =>
      Array.from({ length: Math.floor(rand() * 6) }, () => randomUnit(rand)),
    );
    const ids = new Int32Array(n * k).fill(-1);
    const scores = new Float32Array(n * k);
    for (let r = 0; r < n; r++) {
      const m = Math.floor(rand() * (k + 1));
      for (let h = 0; h < m; h++) {
        ids[r * k + h] = (r + 1 + Math.floor(rand() * (n - 1))) % n;
        scores[r * k + h] = 1 - h / k;
      }
    }
    const found = {
      docs: Int32Array.from({ length: n }, (_, r) => r),
      k,
      ids: ids.slice(),
      scores: scores.slice(),
    };
    const events: string[] = [];
    // A reader that writes into the buffer it is offered, as `docs align`'s does: a buffer still being
    // matched would change the scores below.
    const [buffers, offered]: [ArrayBufferLike[], Array<ArrayBufferLike | undefined>] = [[], []];
    const read = async (rows: readonly number[], reuse?: Float32Array) => {
      events.push('read');
      offered.push(reuse?.buffer);
      const s = rowsOf(rows.map((r) => docsSentences[r] as number[][]));
      const into = roomFor(reuse, s.rows.length);
      into.set(s.rows);
      buffers.push(into.buffer);
      return { ...s, rows: into };
    };
    const fits = (i: number, j: number) => (i + j) % 7 !== 0;
    await matchSentences(found, read, { fits, onProgress: (done) => events.push(`done ${done}`) });
    t.same(
      events,
      ['read', 'read', `done ${MATCH_CHUNK}`, 'read', `done ${2 * MATCH_CHUNK}`, `done ${n}`],
      "each chunk's sentences read before the chunk before is done",
    );
    t.same(
      offered.map((b) => (b === undefined ? -1 : buffers.indexOf(b))),
      [-1, -1, 0],
      "the third chunk is read into the first one's buffer, matched by then",
    );
    const all = rowsOf(docsSentences);
    for (let r = 0; r < n; r++) {
      const want: Array<[number, number]> = [];
      for (let h = 0; h < k && want.length < 4; h++) {
        const j = ids[r * k + h] as number;
        if (j >= 0 && fits(r, j))
          want.push([j, ((scores[r * k + h] as number) + sentenceMatch(all, r, j)) / 2]);
      }
      want.sort((u, v) => v[1] - u[1]);
      const got = Array.from(found.ids.subarray(r * k, (r + 1) * k));
      const ok =
        got.join() === [...want.map(([j]) => j), ...Array(k - want.length).fill(-1)].join() &&
        want.every(([, s], h) => Math.abs((found.scores[r * k + h] as number) - s) < 1e-5);
      if (!ok) t.fail(`row ${r}: ${got} vs ${JSON.stringify(want)}`);
    }
    t.pass(`${n} lists: their best four that fit, by the mean of the score and the match`);
  },
);

/**
 * An alignment cut short goes on where it stopped (src/jobs/align-checkpoint.ts): 20,000 generated documents
 * (two search batches), a run that dies after its first batch, then the same call again: the index is read
 * back instead of built, the first batch's lists are read back instead of searched, and the pairs are those
 * of a run never interrupted. Another input or other options start the work afresh; clearing it removes only
 * the checkpoint's own files.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { clearCheckpoint } from '../../src/jobs/align-checkpoint.js';
import { alignOptionsSchema } from '../../src/jobs/align-options.js';
import { type AlignProgress, alignDocumentSet, type DocumentSet } from '../../src/jobs/align-pairs.js';

const N = 20_000;
const BATCH = 16_384;

/** Seeded documents of 12 made-up words; every 10th shares 8 words with the one before it (a partner). */
function documents(n: number, seed: number): string[] {
  // mulberry32
  let s = seed;
  const rand = () => {
    s = (s + 0x6d2b79f5) | 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
  };
  const word = () =>
    Array.from({ length: 3 + Math.floor(rand() * 6) }, () =>
      String.fromCharCode(97 + Math.floor(rand() * 26)),
    ).join('');
  const vocab = Array.from({ length: 6000 }, word);
  const pick = () => vocab[Math.floor(rand() * vocab.length)] as string;
  const docs: string[][] = [];
  for (let i = 0; i < n; i++) {
    const prev = docs[i - 1];
    const words = Array.from({ length: 12 }, pick);
    if (i % 10 === 9 && prev !== undefined) for (let w = 0; w < 8; w++) words[w] = prev[w] as string;
    docs.push(words);
  }
  return docs.map((w) => w.join(' '));
}

const setOf = (texts: string[]): DocumentSet => ({
  count: texts.length,
  id: (r) => `d${r}`,
  text: (r) => texts[r] as string,
  meta: () => ({}),
});

const texts = documents(N, 7);
const options = alignOptionsSchema.parse({ partners: 1, dim: 32 });
const work = mkdtempSync(join(tmpdir(), 'paramine-align-resume-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

/** Each stage's progress reports, in order. */
const recorder = () => {
  const seen: Array<[string, number, boolean]> = [];
  const onProgress: AlignProgress = (stage, done, _total, readBack) => {
    seen.push([stage, done, readBack === true]);
  };
  return { seen, onProgress };
};

const reference = await alignDocumentSet(setOf(texts), options);

t.test('a run cut short after its first search batch resumes there, with the same pairs', async (t) => {
  t.ok(reference.pairs.length > 100, `the uninterrupted run pairs ${reference.pairs.length} documents`);
  const crash = new Error('killed');
  await t.rejects(
    alignDocumentSet(setOf(texts), options, {
      work,
      onProgress: (stage, done) => {
        if (stage === 'search' && done >= BATCH) throw crash;
      },
    }),
    crash,
    'the first run dies after one batch',
  );
  t.ok(existsSync(join(work, 'index.faiss')), 'the filled index was kept');
  t.ok(existsSync(join(work, 'search-0.bin')), "the first batch's lists were kept");
  t.notOk(existsSync(join(work, `search-${BATCH}.bin`)), 'the second batch was not done');

  const again = recorder();
  const resumed = await alignDocumentSet(setOf(texts), options, { work, onProgress: again.onProgress });
  t.same(resumed.resumed, { index: true, searched: BATCH }, 'the index and one batch were read back');
  t.notOk(
    again.seen.some(([stage]) => stage === 'train' || stage === 'add'),
    'no index was trained or filled',
  );
  t.same(
    again.seen.find(([stage]) => stage === 'search'),
    ['search', BATCH, true],
    'the search progress starts after the batch read back, reported as read back',
  );
  t.notOk(
    again.seen.some(([stage, done, readBack]) => stage === 'search' && done > BATCH && readBack),
    "the batch searched now is this run's work",
  );
  t.same(resumed.pairs, reference.pairs, 'the same pairs as a run never cut short');
  t.same(resumed.band, reference.band, 'the same band');
  t.ok(existsSync(join(work, `search-${BATCH}.bin`)), 'the last batch is kept too');
});

t.test('other documents or other options start afresh', async (t) => {
  const other = texts.slice();
  other[5] = 'a different document altogether';
  const changed = await alignDocumentSet(setOf(other), options, { work });
  t.same(changed.resumed, { index: false, searched: 0 }, 'a changed document: nothing read back');
  const wider = await alignDocumentSet(setOf(other), { ...options, dim: 48 }, { work });
  t.same(wider.resumed, { index: false, searched: 0 }, 'another --dim: nothing read back');
});

t.test("clearing removes the checkpoint's files, nothing else", async (t) => {
  writeFileSync(join(work, 'notes.txt'), 'mine');
  await clearCheckpoint(work);
  t.same(readdirSync(work), ['notes.txt']);
  rmSync(join(work, 'notes.txt'));
  await clearCheckpoint(work);
  t.notOk(existsSync(work), 'an empty directory goes too');
});

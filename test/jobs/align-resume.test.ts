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
import {
  type AlignProgress,
  alignDocumentSet,
  alignShare,
  type DocumentSet,
} from '../../src/jobs/align-pairs.js';
import { madeUpDocuments } from '../helpers/made-up-documents.js';

const N = 20_000;
const BATCH = 16_384;

const setOf = (texts: string[]): DocumentSet => ({
  count: texts.length,
  id: (r) => `d${r}`,
  text: (r) => texts[r] as string,
  meta: () => ({}),
});

const texts = madeUpDocuments(N, 7).map((w) => w.join(' '));
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

t.test("a worker's share (docs align --queue): the coordinator's index, its documents only", async (t) => {
  const shared = mkdtempSync(join(tmpdir(), 'paramine-align-share-'));
  t.teardown(() => rmSync(shared, { recursive: true, force: true }));
  const other = texts.slice();
  other[5] = 'a different document altogether';
  await t.rejects(alignShare(setOf(texts), options, shared), { code: 'CONFLICT' }, 'no index there yet');
  const result = await alignDocumentSet(setOf(texts), options, {
    work: shared,
    distribute: async (plan) => {
      t.same([plan.count, plan.batch], [N, BATCH]);
      await t.rejects(
        alignShare(setOf(other), options, shared),
        { code: 'CONFLICT' },
        'a worker that reads other documents is refused',
      );
      const share = await alignShare(setOf(texts), options, shared);
      for (let from = 0; from < plan.count; from += plan.batch) {
        t.notOk(plan.done(from), `batch ${from} not done before its share`);
        await share.search(from, Math.min(plan.count, from + plan.batch));
        t.ok(plan.done(from), `batch ${from} done after it`);
      }
      await share.close();
    },
  });
  t.same(
    result.resumed,
    { index: false, searched: N },
    "the index built here, every batch read back from the workers' files",
  );
  t.same(result.pairs, reference.pairs, 'the same pairs as one process');
});

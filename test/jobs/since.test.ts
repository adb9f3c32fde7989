/**
 * Mining only what is new (issue #30), a real service (all-MiniLM-L6-v2, FAISS, LMDB): sentences added
 * after the build (paraphrases of built verses among them, and one deleted again); a `since` job returns
 * exactly the pairs of a full re-mine (same k and filters) that involve a sentence added since that point,
 * and nothing else, while querying a fraction of the sentences; `since` by time and by a previous job's
 * untilId agree; a job created before more adds leaves them to the next one.
 */
import t from 'tap';
import type { JobRecord } from '../../src/jobs/index.js';
import { syntheticSentence } from '../helpers/corpus.js';
import { startTestService } from '../helpers/service.js';

const s = await startTestService(300, false);
t.teardown(() => s.close());
const base = s.service.store.count;

const key = (a: number, b: number) => (a < b ? `${a}-${b}` : `${b}-${a}`);
async function pairsOf(
  spec: Record<string, unknown>,
): Promise<{ job: JobRecord; pairs: Map<string, number> }> {
  const created = await s.jobs.create(spec);
  const job = await s.jobs.wait(created.id);
  t.equal(job.state, 'done', JSON.stringify(job.error ?? {}));
  const pairs = new Map<string, number>();
  for (const { pair } of s.jobStore.pairs(job.id))
    pairs.set(key(pair.a.id as number, pair.b.id as number), pair.cosine);
  return { job, pairs };
}

const spec = { k: 5, minCosine: 0.35 };

t.test('since returns exactly the new pairs of a full re-mine', async (t) => {
  const first = await pairsOf(spec);
  t.equal(first.job.spec.untilId, base, 'a job on the build pins its sentences');

  // Day 1: 40 sentences; day 2: 60 more, a third of them near-copies of built verses, one deleted again.
  const day1 = await s.service.writes.add(
    Array.from({ length: 40 }, (_, i) => ({ text: syntheticSentence(i) })),
  );
  const seq2 = s.service.writes.stats.seq;
  const time2 = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 5));
  const verses = await Promise.all(
    Array.from({ length: 20 }, async (_, i) => (await s.service.store.getMany([i * 7]))[0]?.text as string),
  );
  const day2 = await s.service.writes.add([
    ...verses.map((v) => ({ text: `${v.replace(/[.;:]$/, '')}, he said.` })),
    ...Array.from({ length: 40 }, (_, i) => ({ text: syntheticSentence(500 + i) })),
  ]);
  t.ok(day1.every((r) => r.status === 'added') && day2.every((r) => r.status === 'added'));
  const firstNew = day2[0]?.id as number;
  await s.service.writes.delete([day2[3]?.id as number]);

  const full = await pairsOf(spec);
  t.equal(full.job.total, base + 100, 'a full mine queries the added sentences too');
  const expected = new Map(
    [...full.pairs].filter(([k]) => k.split('-').some((id) => Number(id) >= firstNew)),
  );
  t.ok(expected.size > 20, `the re-mine has ${expected.size} pairs with a day-2 sentence`);
  t.ok(
    [...expected.keys()].some((k) => k.split('-').some((id) => Number(id) < base)),
    'some of them pair a new sentence with a built one',
  );

  const since = await pairsOf({ ...spec, since: { seq: seq2 } });
  t.same([...since.pairs.keys()].sort(), [...expected.keys()].sort(), 'exactly those pairs, nothing else');
  for (const [k, cos] of since.pairs)
    t.ok(Math.abs(cos - (expected.get(k) as number)) < 1e-5, `same cosine ${k}`);
  t.ok(since.job.total < full.job.total, `queried ${since.job.total} sentences of ${full.job.total}`);
  // A shallow start deepens while the neighbourhood stays above minCosine: still every pair.
  const shallow = await pairsOf({ ...spec, since: { seq: seq2 }, reverseDepth: 5 });
  t.same([...shallow.pairs.keys()].sort(), [...expected.keys()].sort(), 'reverseDepth 5: the same pairs');
  // A higher minCosine reads less of the neighbourhoods, and is exact too.
  const strict = { k: 5, minCosine: 0.6 };
  const fullStrict = await pairsOf(strict);
  const sinceStrict = await pairsOf({ ...strict, since: { seq: seq2 } });
  t.same(
    [...sinceStrict.pairs.keys()].sort(),
    [...fullStrict.pairs.keys()].filter((k) => k.split('-').some((id) => Number(id) >= firstNew)).sort(),
    'minCosine 0.6: exactly the new pairs',
  );
  t.ok(
    sinceStrict.job.total < full.job.total / 2,
    `queried ${sinceStrict.job.total} sentences of ${full.job.total}`,
  );
  t.notOk(
    [...since.pairs.keys()].some((k) => k.split('-').includes(String(day2[3]?.id))),
    'the deleted sentence is in no pair',
  );

  const byTime = await pairsOf({ ...spec, since: { time: time2 } });
  t.same([...byTime.pairs.keys()].sort(), [...expected.keys()].sort(), 'since a time: the same pairs');

  // Nothing new since the re-mine: the next job with its untilId has nothing to mine.
  const none = await pairsOf({ ...spec, since: { id: full.job.spec.untilId } });
  t.equal(none.job.total, 0);
  t.equal(none.pairs.size, 0);
});

t.test('a since job resumed after more writes reads the queries it fixed at creation', async (t) => {
  const seq = s.service.writes.stats.seq;
  await s.service.writes.add(Array.from({ length: 10 }, (_, i) => ({ text: syntheticSentence(900 + i) })));
  const { job } = await pairsOf({ ...spec, since: { seq } });
  const stored = s.jobStore.queriesOf(job.id);
  t.equal(stored?.ids.length, job.total, 'the job store keeps its query sentences');
  // Writes after its creation change the neighbourhoods it was computed from.
  const older = (stored?.ids ?? []).filter((id) => id < (stored?.first ?? 0));
  t.ok(older.length > 0);
  await s.service.writes.delete([older[0] as number]);
  await s.service.writes.add(Array.from({ length: 10 }, (_, i) => ({ text: syntheticSentence(950 + i) })));
  await s.jobStore.put({ ...job, state: 'queued', processed: 0, pairs: 0 });
  s.jobs.resume();
  const again = await s.jobs.wait(job.id);
  t.equal(again.state, 'done', JSON.stringify(again.error ?? {}));
  t.equal(again.total, job.total);
});

t.test('since refuses what it cannot combine with', async (t) => {
  await t.rejects(
    s.jobs.create({ ...spec, since: { seq: 0 }, scope: { kind: 'range', start: 0, end: 10 } }),
    {
      code: 'BAD_INPUT',
    },
  );
  await t.rejects(s.jobs.create({ ...spec, since: { seq: 0 }, margin: { k: 4 } }), { code: 'BAD_INPUT' });
  await t.rejects(s.jobs.create({ ...spec, reverseDepth: 50 }), { code: 'BAD_INPUT' });
  await t.rejects(s.jobs.create({ ...spec, untilId: 10 ** 9 }), { code: 'BAD_INPUT' });
});

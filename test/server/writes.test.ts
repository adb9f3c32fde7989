/**
 * Writes while serving (issue #30), through the HTTP routes of a real service (all-MiniLM-L6-v2, FAISS,
 * LMDB): 2,000 sentences added to a serving index, one of them a paraphrase of a query, are found at once;
 * duplicates and retried client ids add nothing; a deleted sentence is gone from search and from
 * GET /v1/sentences; all of it holds after the service is closed and opened again; writes need the key;
 * a job's results and its exports leave out the pairs of a sentence deleted after the job ran.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { exportDataset } from '../../src/jobs/export.js';
import { buildApp } from '../../src/server/app.js';
import { DEFAULT_LIMITS } from '../../src/server/context.js';
import { Metrics } from '../../src/server/metrics.js';
import { openService, type Service } from '../../src/service/index.js';
import { NEWS as NEW, NEWS_PARAPHRASE as QUERY, syntheticSentence } from '../helpers/corpus.js';
import { startTestService } from '../helpers/service.js';

const KEY = 'writer-key-123456';
const ts = await startTestService(200, false);
t.teardown(() => rmSync(ts.dir, { recursive: true, force: true }));

const appOf = (service: Service) =>
  buildApp(
    { service, limits: DEFAULT_LIMITS, metrics: new Metrics() },
    { auth: { keys: [{ name: 'writer', key: KEY }], protectAll: false } },
  );
const auth = { authorization: `Bearer ${KEY}` };

async function topIds(app: ReturnType<typeof appOf>, text: string, k = 10): Promise<number[]> {
  const res = await app.inject({ method: 'POST', url: '/v1/search', payload: { text, k, rerank: false } });
  return res.json().results[0].candidates.map((c: { id: number }) => c.id);
}

t.test('adds are searchable at the answer, deletes are gone, both survive a restart', async (t) => {
  let service = ts.service;
  let app = appOf(service);
  const base = service.store.count;
  t.equal(
    (await app.inject({ method: 'POST', url: '/v1/sentences', payload: { sentences: [{ text: NEW }] } }))
      .statusCode,
    401,
    'a write needs the key',
  );

  const texts = Array.from({ length: 2000 }, (_, i) => syntheticSentence(i));
  texts[1234] = NEW;
  let newId = -1;
  for (let i = 0; i < texts.length; i += 500) {
    const sentences = texts
      .slice(i, i + 500)
      .map((text, j) => ({ text, id: `feed-${i + j}`, meta: { n: i + j } }));
    const res = await app.inject({
      method: 'POST',
      url: '/v1/sentences',
      headers: auth,
      payload: { sentences },
    });
    t.equal(res.statusCode, 200, res.body.slice(0, 200));
    const body = res.json();
    if (i === 1000) {
      const t0 = performance.now();
      newId = body.sentences[234].id;
      t.ok((await topIds(app, QUERY)).includes(newId), 'the paraphrase is in the top 10 at once');
      t.ok(performance.now() - t0 < 1000, 'within a second of the answer');
    }
  }
  t.equal(newId, base + 1234, 'ids continue the built ones');
  const again = await app.inject({
    method: 'POST',
    url: '/v1/sentences',
    headers: auth,
    payload: { sentences: [{ text: 'anything else', id: 'feed-1234' }, { text: `  ${NEW} ` }] },
  });
  t.same(
    again.json().sentences,
    [
      { id: newId, status: 'retried', clientId: 'feed-1234' },
      { id: newId, status: 'duplicate' },
    ],
    'a retried client id and a duplicate text add nothing',
  );
  t.match((await app.inject({ method: 'GET', url: `/v1/sentences/${newId}` })).json(), {
    text: NEW,
    meta: { n: 1234 },
  });
  t.match((await app.inject({ method: 'GET', url: '/v1/index' })).json().updates, {
    added: 2000,
    deleted: 0,
  });

  // Delete the new sentence and a built one.
  const builtTop = (await topIds(app, 'My son, listen to your father’s instruction'))[0] as number;
  for (const id of [newId, builtTop]) {
    const del = await app.inject({ method: 'DELETE', url: `/v1/sentences/${id}`, headers: auth });
    t.same(del.json(), { id, deleted: true });
  }
  t.same((await app.inject({ method: 'DELETE', url: `/v1/sentences/${newId}`, headers: auth })).json(), {
    id: newId,
    deleted: false,
  });
  t.equal(
    (await app.inject({ method: 'DELETE', url: '/v1/sentences/999999', headers: auth })).statusCode,
    404,
  );
  const gone = async () => {
    t.notOk((await topIds(app, QUERY, 50)).includes(newId), 'a deleted added sentence is not found');
    t.notOk(
      (await topIds(app, 'My son, listen to your father’s instruction', 50)).includes(builtTop),
      'nor a deleted built one',
    );
    t.equal((await app.inject({ method: 'GET', url: `/v1/sentences/${newId}` })).statusCode, 404);
  };
  await gone();

  // Restart: the writes were durable.
  await app.close();
  await ts.service.close();
  service = await openService({ index: ts.index, reranker: false });
  app = appOf(service);
  t.teardown(async () => {
    await app.close();
    await service.close();
  });
  await gone();
  const other = base + 77;
  t.ok(
    (await topIds(app, (texts[77] as string).replace('.', ' today.'))).includes(other),
    'an added sentence is found after the restart',
  );
  t.match((await app.inject({ method: 'GET', url: '/v1/index' })).json().updates, {
    added: 2000,
    deleted: 2,
  });
  const readd = await app.inject({
    method: 'POST',
    url: '/v1/sentences',
    headers: auth,
    payload: { sentences: [{ text: NEW }] },
  });
  t.equal(readd.json().sentences[0].status, 'added', 'a deleted text can be added again');
  t.ok((await topIds(app, QUERY)).includes(readd.json().sentences[0].id));
});

t.test('a sentence deleted after a job ran leaves its pairs out of the results and of exports', async (t) => {
  const s = await startTestService(60, false);
  t.teardown(() => s.close());
  const app = s.app({ auth: { keys: [{ name: 'writer', key: KEY }], protectAll: false } });
  const job = (
    await app.inject({ method: 'POST', url: '/v1/jobs', headers: auth, payload: { k: 2, minCosine: -1 } })
  ).json();
  await s.jobs.wait(job.id);
  const results = async () =>
    (await app.inject({ method: 'GET', url: `/v1/jobs/${job.id}/results` })).body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number; a: { id: number }; b: { id: number } });
  const before = await results();
  const victim = (before[0] as (typeof before)[0]).a.id;
  const involving = before.filter((p) => p.a.id === victim || p.b.id === victim).length;
  t.ok(involving > 0);
  const del = await app.inject({ method: 'DELETE', url: `/v1/sentences/${victim}`, headers: auth });
  t.same(del.json(), { id: victim, deleted: true });
  const after = await results();
  t.equal(after.length, before.length - involving, 'the pairs of the deleted sentence are left out');
  t.notOk(after.some((p) => p.a.id === victim || p.b.id === victim));
  const tail = (await app.inject({ method: 'GET', url: `/v1/jobs/${job.id}/results?offset=1&limit=3` })).body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).seq);
  t.ok(
    tail.every((seq: number) => seq >= 1 && seq <= 3),
    'offsets still count stored pairs',
  );

  const out = join(s.dir, 'export');
  const summary = await exportDataset({
    source: { state: join(s.dir, 'jobs'), job: job.id },
    out,
    formats: ['jsonl'],
    split: { names: ['all'], fractions: [1] },
    label: 'paraphrase',
    seed: 1,
    index: s.index,
  });
  t.equal(summary.deleted, involving, 'the export says how many it left out');
  t.equal(summary.pairs, before.length - involving);
  const rows = readFileSync(join(out, 'all.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.notOk(rows.some((r: { s1_id: number; s2_id: number }) => r.s1_id === victim || r.s2_id === victim));
});

t.test(
  'replace deletes the old sentence in the same write; delete by metadata takes down a source',
  async (t) => {
    const s = await startTestService(40, false);
    t.teardown(() => s.close());
    const app = s.app({ auth: { keys: [{ name: 'writer', key: KEY }], protectAll: false } });
    const post = (url: string, payload: unknown) =>
      app.inject({ method: 'POST', url, headers: auth, payload: payload as Record<string, unknown> });
    const feed = Array.from({ length: 6 }, (_, i) => ({
      text: syntheticSentence(500 + i),
      meta: { source: i < 4 ? 'feed-7' : 'feed-8', n: i },
    }));
    const ids = (await post('/v1/sentences', { sentences: feed }))
      .json()
      .sentences.map((x: { id: number }) => x.id);

    const old = ids[0] as number;
    const replaced = await post('/v1/sentences', {
      sentences: [{ text: NEW, meta: { source: 'feed-7', n: 0 }, replaces: old }],
    });
    t.equal(replaced.statusCode, 200, replaced.body);
    const newId = replaced.json().sentences[0].id;
    t.equal(
      (await app.inject({ method: 'GET', url: `/v1/sentences/${old}` })).statusCode,
      404,
      'the old is gone',
    );
    t.ok((await topIds(app, QUERY)).includes(newId), 'the new is found');
    const added = async () => (await app.inject({ method: 'GET', url: '/v1/index' })).json().updates.added;
    const before = await added();
    const bad = await post('/v1/sentences', {
      sentences: [{ text: 'something new' }, { text: 'something else', replaces: 999999 }],
    });
    t.equal(bad.statusCode, 404, 'replacing an unknown id is refused');
    t.equal(await added(), before, 'and nothing of that write is there');

    t.equal(
      (await post('/v1/sentences/delete', { where: {} })).statusCode,
      400,
      'an empty filter is refused',
    );
    t.equal((await post('/v1/sentences/delete', { ids: [1], where: { a: 1 } })).statusCode, 400);
    const down = (await post('/v1/sentences/delete', { where: { source: 'feed-7' } })).json();
    t.equal(down.deleted, 4, 'the three left of feed-7 and the replacement');
    t.same(
      [...down.ids].sort((a: number, b: number) => a - b),
      [ids[1], ids[2], ids[3], newId],
    );
    for (const id of [ids[1], ids[2], ids[3], newId]) {
      t.equal((await app.inject({ method: 'GET', url: `/v1/sentences/${id}` })).statusCode, 404);
    }
    t.equal(
      (await app.inject({ method: 'GET', url: `/v1/sentences/${ids[4]}` })).statusCode,
      200,
      'feed-8 stays',
    );
    t.notOk((await topIds(app, QUERY, 50)).includes(newId));
    const byIds = (await post('/v1/sentences/delete', { ids: [ids[4], 999999] })).json();
    t.match(byIds, { deleted: 1, ids: [ids[4]], missing: [999999] });
    t.equal((await post('/v1/sentences/delete', { where: { source: 'feed-7' } })).json().deleted, 0);
  },
);

/**
 * Writes while serving (issue #30), through the HTTP routes of a real service (all-MiniLM-L6-v2, FAISS,
 * LMDB): 2,000 sentences added to a serving index, one of them a paraphrase of a query, are found at once;
 * duplicates and retried client ids add nothing; a deleted sentence is gone from search and from
 * GET /v1/sentences; all of it holds after the service is closed and opened again; writes need the key.
 */
import { rmSync } from 'node:fs';
import t from 'tap';
import { buildApp } from '../../src/server/app.js';
import { DEFAULT_LIMITS } from '../../src/server/context.js';
import { Metrics } from '../../src/server/metrics.js';
import { openService, type Service } from '../../src/service/index.js';
import { syntheticSentence } from '../helpers/corpus.js';
import { startTestService } from '../helpers/service.js';

const KEY = 'writer-key-123456';
const ts = await startTestService(200, false);
t.teardown(() => rmSync(ts.dir, { recursive: true, force: true }));

const NEW = 'The committee postponed the vote on the new city budget until next week.';
const QUERY = 'The vote on the city budget was delayed by the committee to next week.';

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

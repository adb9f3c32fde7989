/**
 * The ids users give, through the HTTP routes of a real service (tiny encoder, FAISS, LMDB): a jsonl
 * record's `id` and a write's client id both find their sentence (GET /v1/sentences/{id}) and delete it
 * (DELETE); digits stay the index's own ids; an id two records share is a 409 naming them; an unknown one
 * a 404 that says what ids are. Records without ids get no id table.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildIndex } from '../../src/indexer/build.js';
import { buildApp } from '../../src/server/app.js';
import { DEFAULT_LIMITS } from '../../src/server/context.js';
import { Metrics } from '../../src/server/metrics.js';
import { openService } from '../../src/service/index.js';
import { GROUPS_DIR } from '../../src/store/index.js';

const MODEL = 'test/fixtures/tiny-encoder';
const dir = mkdtempSync(join(tmpdir(), 'paramine-user-ids-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const records = [
  { id: 'n1', text: 'The storm closed the harbour for three days.' },
  { id: 'n2', text: 'Fishing boats stayed tied to the pier.' },
  { id: 'n3', text: 'The orchestra played a new symphony on Friday night.' },
  { id: 'twin', text: 'Engineers reopened the old bridge after a year of repairs.' },
  { id: 'twin', text: 'Traffic returned to the bridge on Monday.' },
];
const corpus = join(dir, 'news.jsonl');
writeFileSync(corpus, records.map((r) => JSON.stringify(r)).join('\n'));
const index = join(dir, 'index');
await buildIndex({ inputs: [corpus], out: index, model: MODEL, quiet: true });
const service = await openService({ index, model: MODEL, reranker: false });
t.teardown(() => service.close());
const app = buildApp({ service, limits: DEFAULT_LIMITS, metrics: new Metrics() }, {});
const get = (id: string) => app.inject({ method: 'GET', url: `/v1/sentences/${encodeURIComponent(id)}` });

t.test("a built record's id finds it and deletes it", async (t) => {
  const n2 = await get('n2');
  t.equal(n2.statusCode, 200);
  t.match(n2.json(), { id: 1, text: records[1]?.text, meta: { id: 'n2' } });
  t.match((await get('1')).json(), { id: 1 }, 'digits are the index id');
  const del = await app.inject({ method: 'DELETE', url: '/v1/sentences/n2' });
  t.same(del.json(), { id: 1, deleted: true });
  const gone = await get('n2');
  t.equal(gone.statusCode, 404, 'a deleted record is not found by its id');
  t.match(gone.json(), { code: 'NOT_FOUND', field: 'id' });
});

t.test("a write's client id finds its sentence as a record's id does", async (t) => {
  const add = await app.inject({
    method: 'POST',
    url: '/v1/sentences',
    payload: { sentences: [{ id: 'feed-42', text: 'Markets rallied after the announcement.' }] },
  });
  const added = add.json().sentences[0].id as number;
  t.match((await get('feed-42')).json(), { id: added, text: 'Markets rallied after the announcement.' });
  t.same((await app.inject({ method: 'DELETE', url: '/v1/sentences/feed-42' })).json(), {
    id: added,
    deleted: true,
  });
});

t.test('an id two records share, and one nobody gave', async (t) => {
  const twin = await get('twin');
  t.equal(twin.statusCode, 409);
  t.match(twin.json().message, /names 2 sentences \(3, 4\)/);
  const none = await get('abc');
  t.equal(none.statusCode, 404);
  t.match(none.json().message, /not an index id \(0, 1, 2, \.\.\.\) nor an id a record or a write gave/);
});

t.test('records without ids get no id table', async (t) => {
  const plain = join(dir, 'plain.txt');
  writeFileSync(plain, 'One sentence here.\nAnother one there.\n');
  const out = join(dir, 'plain');
  await buildIndex({ inputs: [plain], out, model: MODEL, quiet: true });
  t.notOk(existsSync(join(out, GROUPS_DIR)));
});

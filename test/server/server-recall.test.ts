/**
 * Operating points through the service: `paramine index` tunes an IVF index as its last step, GET
 * /v1/index lists the points, and `recall` in a search or job body picks one (nprobe given beside it
 * wins; an index without points refuses it, naming the field).
 */
import t from 'tap';
import { readManifest, ShardedIndex } from '../../src/index/index.js';
import { validateResponse } from '../helpers/openapi.js';
import { startTestService } from '../helpers/service.js';

const svc = await startTestService(300, false, {}, { factory: 'IVF4,SQ8', tuneQueries: 100 });
t.teardown(() => svc.close());
const app = svc.app();
await app.ready();

t.test('the build tuned the index: operating points and defaults in the manifest', async (t) => {
  const m = await readManifest(svc.index);
  const points = m.operatingPoints ?? [];
  t.ok(points.length >= 1, `${points.length} operating points`);
  t.equal(m.tuning?.queries, 100);
  t.ok(
    points.some((p) => p.nprobe === m.search.nprobe && p.kFactor === m.search.kFactor),
    'the search defaults are one of the points',
  );
});

t.test('GET /v1/index lists the operating points', async (t) => {
  const res = await app.inject({ method: 'GET', url: '/v1/index' });
  t.equal(res.statusCode, 200);
  t.doesNotThrow(() => validateResponse('GET', '/v1/index', 200, res.headers['content-type'], res.body));
  const body = res.json() as { operatingPoints: unknown[]; manifest: { operatingPoints: unknown[] } };
  t.ok(body.operatingPoints.length >= 1);
  t.same(body.operatingPoints, body.manifest.operatingPoints);
});

t.test('recall in a search body picks the cheapest point reaching it; nprobe wins', async (t) => {
  const m = await readManifest(svc.index);
  const index = await ShardedIndex.open(svc.index);
  const points = m.operatingPoints ?? [];
  const top = points[points.length - 1]!;
  t.match(index.pointFor(1), { nprobe: top.nprobe, kFactor: top.kFactor }, 'recall 1: the most accurate');
  t.match(index.pointFor(0.01), { nprobe: points[0]!.nprobe }, 'a low recall: the cheapest');
  t.equal(index.pointFor(undefined), undefined);
  await index.close();
  for (const body of [{ recall: 0.9 }, { recall: 0.9, nprobe: 2 }]) {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/search',
      payload: { text: 'A wise son makes a glad father.', k: 3, rerank: false, ...body },
    });
    t.equal(res.statusCode, 200, res.body.slice(0, 200));
    t.doesNotThrow(() => validateResponse('POST', '/v1/search', 200, res.headers['content-type'], res.body));
  }
  const bad = await app.inject({ method: 'POST', url: '/v1/search', payload: { text: 'x', recall: 1.5 } });
  t.equal(bad.statusCode, 400);
  t.match(bad.json(), { field: 'recall' });
});

t.test('recall in a job body is accepted', async (t) => {
  const res = await app.inject({
    method: 'POST',
    url: '/v1/jobs',
    payload: { k: 3, recall: 0.9, minCosine: 0.9 },
  });
  t.equal(res.statusCode, 202, res.body.slice(0, 300));
  const id = (res.json() as { id: string }).id;
  for (let i = 0; i < 200; i++) {
    const job = (await app.inject({ method: 'GET', url: `/v1/jobs/${id}` })).json() as { state: string };
    if (job.state === 'done' || job.state === 'failed') {
      t.equal(job.state, 'done', JSON.stringify(job).slice(0, 300));
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  t.fail('job did not finish');
});

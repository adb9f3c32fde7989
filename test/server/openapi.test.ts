/**
 * openapi.yaml against the app: the committed document is the one the route schemas generate (`npm run
 * openapi`), it is valid OpenAPI 3.1, it documents exactly the routes the app serves (fastify's onRoute
 * hook), and real responses of a real small service match its schemas.
 */

import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import t, { type Test } from 'tap';
import { committedOpenApi } from '../../src/server/contract/document.js';
import { loadSpec, routesInSpec, SPEC_FILE, toFastifyPath, validateResponse } from '../helpers/openapi.js';
import { HAS_RERANKER, startTestService } from '../helpers/service.js';

t.test(
  'the committed openapi.yaml is the generated one (run npm run openapi after changing a route schema)',
  async (t) => {
    t.equal(readFileSync(SPEC_FILE, 'utf8'), committedOpenApi());
  },
);

t.test('openapi.yaml is a valid OpenAPI 3.1 document', async (t) => {
  const validator = new Validator();
  const res = await validator.validate(loadSpec());
  t.ok(res.valid, `valid: ${JSON.stringify(res.errors, null, 2)}`);
  t.equal(validator.version, '3.1');
  t.ok(routesInSpec().length >= 8, 'documents the service routes');
});

const svc = await startTestService(40);
t.teardown(() => svc.close());
const app = svc.app();
await app.ready();

t.test('the spec documents exactly the routes the app serves', async (t) => {
  const served = app.servedRoutes.map((r) => ({ method: r.method, path: r.url }));
  t.ok(
    served.length >= 8,
    `onRoute saw the routes (${served.map((r) => `${r.method} ${r.path}`).join(', ')})`,
  );
  const documented = new Set(routesInSpec().map((r) => `${r.method} ${toFastifyPath(r.path)}`));
  for (const r of routesInSpec()) {
    t.ok(
      app.hasRoute({ method: r.method as 'GET', url: toFastifyPath(r.path) }),
      `app serves ${r.method} ${r.path}`,
    );
  }
  for (const r of served)
    t.ok(documented.has(`${r.method} ${r.path}`), `spec documents ${r.method} ${r.path}`);
});

async function check(
  t: Test,
  method: 'GET' | 'POST',
  url: string,
  expectStatus: number,
  payload?: object,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const res = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
  t.equal(res.statusCode, expectStatus, `${method} ${url} status (${res.body.slice(0, 200)})`);
  t.doesNotThrow(() => validateResponse(method, url, res.statusCode, res.headers['content-type'], res.body));
  return res.headers['content-type'];
}

t.test('real responses match the spec', async (t) => {
  await check(t, 'POST', '/v1/search', 200, { text: 'The proverbs of Solomon, son of David.', k: 3 });
  await check(t, 'POST', '/v1/search', 200, {
    texts: ['Hear, my son, your father’s instruction.', 'A wise son makes a glad father.'],
    rerank: false,
    filter: { minTokens: 3 },
  });
  await check(t, 'POST', '/v1/search', 400, { text: 'x', k: 1000 });
  await check(t, 'POST', '/v1/search', 400, { text: 'x', texts: ['y'] });
  await check(t, 'POST', '/v1/classify', HAS_RERANKER ? 200 : 503, {
    pairs: [['A wise son makes a glad father.', 'A wise son maketh a glad father.'], { s1: 'a', s2: 'b' }],
  });
  await check(t, 'POST', '/v1/classify', 400, { pairs: [] });
  await check(t, 'GET', '/v1/sentences/3', 200);
  await check(t, 'GET', '/v1/sentences/999999', 404);
  await check(t, 'GET', '/v1/sentences/-1', 404);
  await check(t, 'GET', '/v1/index', 200);
  await check(t, 'GET', '/v1/domains', 200);
  await check(t, 'POST', '/v1/search', 404, { text: 'a test', domain: { name: 'none' } });
  await check(t, 'GET', '/healthz', 200);
  await check(t, 'GET', '/readyz', 200);
  t.match(await check(t, 'GET', '/metrics', 200), /^text\/plain/);
  t.match(await check(t, 'GET', '/openapi.yaml', 200), /^application\/yaml/);
  t.match(await check(t, 'GET', '/openapi.json', 200), /^application\/json/);
  const big = await app.inject({
    method: 'POST',
    url: '/v1/search',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ text: 'x'.repeat(2 << 20) }),
  });
  t.equal(big.statusCode, 413);
  validateResponse('POST', '/v1/search', big.statusCode, big.headers['content-type'], big.body);
  const xml = await app.inject({
    method: 'POST',
    url: '/v1/classify',
    headers: { 'content-type': 'application/xml' },
    payload: '<pairs/>',
  });
  t.equal(xml.statusCode, 415);
  validateResponse('POST', '/v1/classify', xml.statusCode, xml.headers['content-type'], xml.body);
});

t.test('401 with --auth-all, health probes stay open', async (t) => {
  const locked = svc.app({ auth: { keys: [{ name: 'tester', key: 'secret-key-1' }], protectAll: true } });
  for (const url of ['/v1/index', '/metrics', '/v1/sentences/1']) {
    const res = await locked.inject({ method: 'GET', url });
    t.equal(res.statusCode, 401, url);
    validateResponse('GET', url, res.statusCode, res.headers['content-type'], res.body);
  }
  const res = await locked.inject({ method: 'POST', url: '/v1/search', payload: { text: 'hi' } });
  t.equal(res.statusCode, 401);
  validateResponse('POST', '/v1/search', 401, res.headers['content-type'], res.body);
  const ok = await locked.inject({
    method: 'GET',
    url: '/v1/index',
    headers: { authorization: 'Bearer secret-key-1' },
  });
  t.equal(ok.statusCode, 200);
  t.equal((await locked.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
});

t.test('validateResponse rejects what the spec does not say', async (t) => {
  t.throws(() => validateResponse('GET', '/v1/nope', 200, 'application/json', {}), /no operation/);
  t.throws(() => validateResponse('DELETE', '/v1/index', 200, 'application/json', {}), /no operation/);
  t.throws(
    () => validateResponse('GET', '/healthz', 418, 'application/json', {}),
    /status 418 is not documented/,
  );
  t.throws(() => validateResponse('GET', '/healthz', 200, 'text/html', '<p>ok</p>'), /Content-Type/);
  t.throws(
    () => validateResponse('GET', '/healthz', 200, 'application/json', { status: 'ok', extra: 1 }),
    /extra/,
  );
  t.throws(
    () => validateResponse('GET', '/v1/sentences/5', 200, 'application/json', { id: -1, text: 'x' }),
    /\/id/,
  );
  t.throws(
    () =>
      validateResponse('GET', '/v1/sentences/5', 404, 'application/json', {
        code: 'BAD_INPUT',
        message: 'x',
      }),
    /code/,
  );
  t.throws(
    () => validateResponse('GET', '/v1/index', 200, 'application/json', '{not json'),
    /not valid JSON/,
  );
  t.doesNotThrow(() =>
    validateResponse('GET', '/v1/sentences/5/', 404, 'application/json; charset=utf-8', {
      code: 'NOT_FOUND',
      message: 'no sentence with id 5',
      field: 'id',
    }),
  );
});

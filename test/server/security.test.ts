/**
 * Hostile input against the HTTP service: every state-changing route needs a key when keys are set,
 * keys come from a file or the environment (never visible in the process's arguments), file scopes and
 * path parameters stay inside their directories (symlinks included), every size limit holds, slow
 * handlers time out, and no response carries a stack trace or an internal message.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import t from 'tap';
import { ApiKeys } from '../../src/server/auth.js';
import { DEFAULT_LIMITS } from '../../src/server/context.js';
import { spawnServe } from '../../src/testing/index.js';
import { HAS_RERANKER, startTestService } from '../helpers/service.js';

const svc = await startTestService(120);
t.teardown(() => svc.close());
const KEY = 'alice-key-0123456789';
const keys = [
  { name: 'alice', key: KEY },
  { name: 'bob', key: 'bob-key-0123456789' },
];

/** Every route the app serves, collected as its plugins register them (at ready()). */
function appWithRoutes(options: Parameters<typeof svc.app>[0]): {
  app: FastifyInstance;
  routes: { method: string; url: string; stream?: boolean }[];
} {
  const routes: { method: string; url: string; stream?: boolean }[] = [];
  const app = svc.app(options);
  app.addHook('onRoute', (r) => {
    for (const m of [r.method].flat()) routes.push({ method: m, url: r.url, stream: r.config?.stream });
  });
  return { app, routes };
}

/** POST routes that only read (answer a query) and so are open unless --auth-all. */
const READ_POSTS = new Set(['/v1/search', '/v1/classify', '/v1/annotations/lookup']);

const fill = (url: string) =>
  url
    .replace('/v1/jobs/:id', '/v1/jobs/00000000-0000-4000-8000-000000000000')
    .replace('/v1/annotations/:id', `/v1/annotations/${'0'.repeat(32)}`)
    .replace(/:(\w+)/g, 'x');

t.test('with keys, every state-changing route answers 401 without a valid key', async (t) => {
  const { app, routes } = appWithRoutes({ auth: { keys, protectAll: false } });
  await app.ready();
  const writes = routes.filter((r) => !['GET', 'HEAD', 'OPTIONS'].includes(r.method));
  t.ok(writes.length >= 4, `${writes.length} non-GET routes`);
  const changing = writes.filter((r) => !READ_POSTS.has(r.url));
  t.same(changing.map((r) => `${r.method} ${r.url}`).sort(), [
    'DELETE /v1/annotations/:id',
    'DELETE /v1/jobs/:id',
    'DELETE /v1/sentences/:id',
    'POST /v1/annotations',
    'POST /v1/jobs',
    'POST /v1/sentences',
    'POST /v1/sentences/delete',
  ]);
  for (const r of changing) {
    for (const authorization of [undefined, 'Bearer wrong-key-0123456789', KEY, `Basic ${KEY}`, 'Bearer ']) {
      const res = await app.inject({
        method: r.method as 'POST',
        url: fill(r.url),
        payload: r.method === 'POST' ? {} : undefined,
        headers: authorization === undefined ? {} : { authorization },
      });
      t.equal(res.statusCode, 401, `${r.method} ${r.url} with ${authorization ?? 'no header'}`);
      t.equal(res.json().code, 'UNAUTHORIZED');
      t.notMatch(res.body, KEY, 'the key is never echoed');
    }
  }
  // With a valid key the same routes get past auth (to validation or a 404 for made-up ids).
  const res = await app.inject({
    method: 'DELETE',
    url: fill('/v1/jobs/:id'),
    headers: { authorization: `Bearer ${KEY}` },
  });
  t.equal(res.statusCode, 404);
  // Read POSTs stay open without --auth-all, and ask with it.
  const open = await app.inject({ method: 'POST', url: '/v1/search', payload: { text: 'hello', k: 1 } });
  t.equal(open.statusCode, 200);
  const locked = svc.app({ auth: { keys, protectAll: true } });
  for (const url of READ_POSTS) {
    const r = await locked.inject({ method: 'POST', url, payload: {} });
    t.equal(r.statusCode, 401, `${url} with --auth-all`);
  }
});

t.test(
  'streaming routes are not cut by the request timeout (schemathesis found follow=1 cut at 30 s)',
  async (t) => {
    const { app, routes } = appWithRoutes({ requestTimeoutMs: 300 });
    await app.ready();
    const streams = routes.filter(
      (r) => r.method === 'GET' && /\/(results|clusters|events)$|^\/v1\/annotations$/.test(r.url),
    );
    t.equal(streams.length, 4, streams.map((r) => r.url).join(', '));
    for (const r of streams) t.ok(r.stream, `${r.url}: no handler timeout`);
    const job = await svc.jobs.create({ k: 2 });
    await svc.jobs.wait(job.id, undefined, 20);
    const res = await app.inject({ method: 'GET', url: `/v1/jobs/${job.id}/results?follow=1` });
    t.equal(res.statusCode, 200);
  },
);

t.test('keys are compared as digests: any length, any bytes, no throw, every key checked', async (t) => {
  const auth = new ApiKeys({ keys, protectAll: false });
  t.equal(auth.nameOf(KEY), 'alice');
  t.equal(auth.nameOf('bob-key-0123456789'), 'bob');
  for (const given of [
    '',
    'a',
    KEY.slice(0, -1),
    `${KEY}x`,
    'x'.repeat(100_000),
    '\u0000\uffff',
    KEY.toUpperCase(),
  ]) {
    t.equal(auth.nameOf(given), undefined, `rejects a ${given.length}-character near miss`);
  }
  // The source uses timingSafeEqual on sha256 digests (fixed length, so no early exit on length).
  const src = readFileSync('src/server/auth.ts', 'utf8');
  t.match(src, /timingSafeEqual\(k\.digest, g\)/);
  t.match(src, /createHash\('sha256'\)/);
});

t.test('paramine serve reads named keys from a file and the environment, not argv', async (t) => {
  const file = join(svc.dir, 'keys.txt');
  writeFileSync(file, `# annotators\nalice:${KEY}\n`, { mode: 0o600 });
  const child = await spawnServe(
    [
      'dist/cli.js',
      'serve',
      '--index',
      svc.index,
      '--no-reranker',
      '--api-keys-file',
      file,
      '--log-level',
      'error',
    ],
    { env: { ...process.env, PARAMINE_API_KEYS: 'carol:carol-key-0123456789' } },
  );
  t.teardown(() => child.stop());
  const cmdline = readFileSync(`/proc/${child.child.pid}/cmdline`, 'utf8');
  t.notMatch(cmdline, KEY, 'no key in the process arguments (what ps shows)');
  t.notMatch(cmdline, 'carol-key');
  const who = async (key?: string) =>
    fetch(`${child.url}/v1/whoami`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  t.equal(((await (await who(KEY)).json()) as { name: string }).name, 'alice', 'the file key is named');
  t.equal(
    ((await (await who('carol-key-0123456789')).json()) as { name: string }).name,
    'carol',
    'the env key is named',
  );
  t.equal((await who('mallory-key-0123456789')).status, 401);
  const job = await fetch(`${child.url}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"k": 2}',
  });
  t.equal(job.status, 401, 'a job cannot start without a key');
});

t.test('file scopes cannot leave the data directory, symlinks included', async (t) => {
  const app = svc.app();
  const outside = join(svc.dir, 'secret.txt');
  writeFileSync(outside, 'a secret sentence outside the data directory.\n');
  writeFileSync(join(svc.dataDir, 'inside.txt'), 'In the beginning God created the heaven and the earth.\n');
  mkdirSync(join(svc.dataDir, 'sub'), { recursive: true });
  symlinkSync(outside, join(svc.dataDir, 'link-out.txt'));
  symlinkSync(svc.dir, join(svc.dataDir, 'sub', 'dir-out'));
  symlinkSync(join(svc.dataDir, 'inside.txt'), join(svc.dataDir, 'sub', 'link-in.txt'));
  const create = (path: string) =>
    app.inject({ method: 'POST', url: '/v1/jobs', payload: { k: 2, scope: { kind: 'file', path } } });
  for (const path of [
    '../secret.txt',
    outside,
    'link-out.txt',
    'sub/dir-out/secret.txt',
    'sub/../../secret.txt',
    '/etc/passwd',
    '.',
    'sub/..',
    '%2e%2e/secret.txt',
    'missing.txt',
  ]) {
    const res = await create(path);
    t.equal(res.statusCode, 400, `${path} refused`);
    t.match(res.json(), { field: 'scope.path' });
    t.notMatch(res.body, 'secret sentence');
  }
  const ok = await create('sub/link-in.txt');
  t.equal(ok.statusCode, 202, 'a symlink that stays inside is fine');
  await svc.jobs.cancel(ok.json().id).catch(() => undefined);
});

t.test('path parameters cannot reach files outside the web root', async (t) => {
  const app = svc.app();
  for (const url of [
    '/assets/..%2f..%2f..%2fpackage.json',
    '/assets/%2e%2e/app.ts',
    '/assets/../../package.json',
    '/vendor/..%2fpreact.mjs',
    '/vendor/%2e%2e%2f%2e%2e%2fpackage.json',
    '/v1/jobs/..%2f..%2fmanifest.json',
    '/v1/sentences/..%2f1',
    '/assets/app.js%00.png',
  ]) {
    const res = await app.inject({ method: 'GET', url });
    t.ok([400, 404].includes(res.statusCode), `${url}: ${res.statusCode}`);
    t.notMatch(res.body, '"dependencies"', 'no package.json');
  }
});

t.test('every size limit answers 4xx with a stable code', async (t) => {
  const app = svc.app();
  const L = DEFAULT_LIMITS;
  const post = (url: string, payload: unknown) =>
    app.inject({ method: 'POST', url, payload: payload as object });
  const cases: [string, unknown, number, string][] = [
    ['/v1/search', { texts: Array(L.maxTexts + 1).fill('hello') }, 400, 'texts'],
    ['/v1/search', { text: 'x'.repeat(L.maxTextChars + 1) }, 400, 'text'],
    ['/v1/search', { text: 'hello', k: L.maxK + 1 }, 400, 'k'],
    ['/v1/search', { text: 'hello', candidates: L.maxCandidates + 1 }, 400, 'candidates'],
    ['/v1/search', { text: 'hello', k: -1 }, 400, 'k'],
    ['/v1/search', { text: 'hello', k: 1e308 }, 400, 'k'],
    ['/v1/classify', { pairs: Array(L.maxPairs + 1).fill(['a', 'b']) }, 400, 'pairs'],
    ['/v1/jobs', { k: 1e9 }, 400, 'k'],
    ['/v1/annotations/lookup', { pairs: Array(501).fill({ s1: 'a', s2: 'b' }) }, 400, 'pairs'],
  ];
  if (HAS_RERANKER) {
    cases.push([
      '/v1/search',
      { texts: Array(L.maxTexts).fill('hi'), candidates: 100, rerank: true },
      400,
      'candidates',
    ]);
  }
  for (const [url, body, status, field] of cases) {
    const res = await post(url, body);
    t.equal(res.statusCode, status, `${url} ${field}`);
    t.equal(res.json().code, 'BAD_INPUT');
    t.match(res.json().field ?? '', field);
  }
  const big = await app.inject({
    method: 'POST',
    url: '/v1/search',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ text: 'x'.repeat(2 << 20) }),
  });
  t.equal(big.statusCode, 413);
  t.equal(big.json().code, 'PAYLOAD_TOO_LARGE');
  const proto = await app.inject({
    method: 'POST',
    url: '/v1/search',
    headers: { 'content-type': 'application/json' },
    payload: '{"text":"hi","__proto__":{"k":1000}}',
  });
  t.equal(proto.statusCode, 400, 'prototype poisoning is refused');
});

t.test('a handler that runs too long is a 503 TIMEOUT, and errors never leak internals', async (t) => {
  const app = svc.app({
    requestTimeoutMs: 300,
    plugins: [
      async (scope) => {
        scope.get('/test/slow', async () => {
          await sleep(2000);
          return { late: true };
        });
        scope.get('/test/throws', async () => {
          throw new Error('ENOENT /srv/secret/path at Object.<anonymous> (/app/x.js:1:1)');
        });
        scope.get('/test/type-error', async () => {
          const o = JSON.parse('null') as { a: { b: number } };
          return o.a.b;
        });
      },
    ],
  });
  const started = Date.now();
  const slow = await app.inject({ method: 'GET', url: '/test/slow' });
  t.equal(slow.statusCode, 503);
  t.equal(slow.json().code, 'TIMEOUT');
  t.equal(slow.headers['retry-after'], '1');
  t.ok(Date.now() - started < 1500, 'answered at the timeout, not when the handler ended');
  for (const url of ['/test/throws', '/test/type-error']) {
    const res = await app.inject({ method: 'GET', url });
    t.equal(res.statusCode, 500);
    t.same(res.json(), { code: 'INTERNAL', message: 'internal error; see the server log' });
  }
  for (const [url, payload] of [
    ['/v1/search', '{"text": '],
    ['/v1/search', '{"text": "a", "k": "ten"}'],
    ['/v1/jobs', '[1,2,3]'],
    ['/v1/classify', '{"pairs": [[1, 2]]}'],
  ] as const) {
    const res = await app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payload,
    });
    t.ok(res.statusCode >= 400 && res.statusCode < 500, `${url} ${payload}: ${res.statusCode}`);
    t.notMatch(res.body, /\bat \S+ \(|node_modules|\/src\/|\.ts:\d+/, 'no stack frame or source path');
  }
});

/**
 * The web page's routes on a real small service (real models, index, LMDB stores), every response
 * checked against openapi.yaml: the page and its assets (CSP, no inline script), /v1/config and
 * /v1/whoami, the annotation routes, search and job results with diffs, and a job's server-sent events.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import t, { type Test } from 'tap';
import { WEB_ROOT } from '../../src/server/routes/web.js';
import { validateResponse } from '../helpers/openapi.js';
import { HAS_RERANKER, startTestService } from '../helpers/service.js';

const svc = await startTestService(60);
t.teardown(() => svc.close());
const app = svc.app();
const KEY = 'web-test-key-1';
const keys = [{ name: 'tester', key: KEY }];
const keyed = svc.app({ auth: { keys, protectAll: false } });
const locked = svc.app({ auth: { keys, protectAll: true } });

interface Call {
  method?: 'GET' | 'POST' | 'DELETE';
  url: string;
  payload?: object;
  headers?: Record<string, string>;
}

/** One request, its status checked and its response validated against the spec. */
async function call(t: Test, on: FastifyInstance, c: Call, status: number) {
  const method = c.method ?? 'GET';
  const res = await on.inject({
    method,
    url: c.url,
    headers: c.headers ?? {},
    ...(c.payload === undefined ? {} : { payload: c.payload }),
  });
  t.equal(res.statusCode, status, `${method} ${c.url} (${res.body.slice(0, 160)})`);
  t.doesNotThrow(() =>
    validateResponse(method, c.url, res.statusCode, res.headers['content-type'], res.body),
  );
  return res;
}

t.test('the page and its assets: CSP, no inline script or style, every import served', async (t) => {
  for (const on of [app, locked]) {
    const page = await call(t, on, { url: '/' }, 200);
    t.match(page.headers['content-type'], /^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    t.match(csp, /script-src 'self'/);
    t.notMatch(csp, /unsafe-inline|unsafe-eval/, 'no inline script or style allowed');
    t.notMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/, 'every script has a src');
    t.notMatch(page.body, /<style|\sstyle=/, 'no inline style');
  }
  const files = readdirSync(WEB_ROOT).filter((f) => /\.(js|css|svg)$/.test(f));
  t.ok(files.includes('app.js') && files.includes('style.css'));
  const imports = new Set<string>();
  for (const f of files) {
    const res = await call(t, locked, { url: `/assets/${f}` }, 200);
    t.ok(res.headers['content-security-policy'], `${f} carries the CSP`);
    const text = readFileSync(join(WEB_ROOT, f), 'utf8');
    t.notMatch(text, /\binnerHTML\b|\beval\(|new Function\(/, `${f}: no HTML strings or eval`);
    for (const m of text.matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)) imports.add(m[1] as string);
  }
  for (const spec of imports) {
    const url = spec.startsWith('./') ? `/assets/${spec.slice(2)}` : spec;
    t.match(url, /^\/(assets|vendor)\//, `${spec} is served by this origin`);
    await call(t, app, { url }, 200);
  }
  const hooks = await call(t, app, { url: '/vendor/hooks.mjs' }, 200);
  t.match(hooks.body, /from"\.\/preact\.mjs"/, 'preact/hooks imports the file beside it');
  t.notMatch(hooks.body, /from\s*["']preact["']/);
  await call(
    t,
    app,
    { url: '/vendor/hooks.mjs', headers: { 'if-none-match': String(hooks.headers.etag) } },
    304,
  );
  await call(t, app, { url: '/vendor/react.mjs' }, 404);
  await call(t, app, { url: '/assets/missing.js' }, 404);
  await call(t, app, { url: '/assets/app.json' }, 400);
});

t.test('config and whoami', async (t) => {
  const config = JSON.parse((await call(t, app, { url: '/v1/config' }, 200)).body);
  t.same(config.auth, { keys: false, protectAll: false });
  t.equal(config.reranker === null, !HAS_RERANKER);
  t.equal(config.annotation.schemes.turku.accept, '4');
  t.ok(config.jobs.presets.multipit);
  t.same(JSON.parse((await call(t, app, { url: '/v1/whoami' }, 200)).body), { keys: false, name: null });
  await call(t, locked, { url: '/v1/config' }, 401);
  await call(t, keyed, { url: '/v1/config' }, 200);
  await call(t, keyed, { url: '/v1/whoami' }, 401);
  await call(t, keyed, { url: '/v1/whoami', headers: { authorization: 'Bearer wrong-key-0000' } }, 401);
  const who = await call(t, keyed, { url: '/v1/whoami', headers: { authorization: `Bearer ${KEY}` } }, 200);
  t.same(JSON.parse(who.body), { keys: true, name: 'tester' }, "the key's name");
});

const S1 = 'The proverbs of Solomon, the son of David, king of Israel:';
const S2 = 'The proverbs of Solomon the son of David, king of Israel;';

t.test('annotations: write, replace, look up, summarize, export, undo', async (t) => {
  const body = { s1: S1, s2: S2, s2_id: 1, scheme: 'binary', decision: 'accept', annotator: 'ana' };
  const first = JSON.parse(
    (await call(t, app, { method: 'POST', url: '/v1/annotations', payload: body }, 201)).body,
  );
  t.match(first, { s1: S1, s2: S2, label: 'paraphrase', annotator: 'ana', decision: 'accept', s2_id: 1 });
  const relabel = { ...body, scheme: 'turku', decision: 'label', label: '4<si', cosine: 0.98 };
  const second = JSON.parse(
    (await call(t, app, { method: 'POST', url: '/v1/annotations', payload: relabel }, 201)).body,
  );
  t.equal(second.id, first.id, 'the same pair by the same annotator is one record');
  t.equal(second.label, '4<is');
  const seen = {
    s1: { before: ['The sentence before.'], after: [] },
    s2: { before: [], after: ['And after.'] },
  };
  const inContext = JSON.parse(
    (
      await call(
        t,
        app,
        {
          method: 'POST',
          url: '/v1/annotations',
          payload: {
            ...body,
            annotator: 'ctx',
            scheme: 'turku',
            decision: 'label',
            label: '3',
            context: seen,
          },
        },
        201,
      )
    ).body,
  );
  t.match(inContext, { label: '3', context: seen }, 'a paraphrase in context only keeps the context seen');
  const exported = (await call(t, app, { method: 'GET', url: '/v1/annotations?annotator=ctx' }, 200)).body;
  t.same(JSON.parse(exported.trim()).context, seen, 'and the export carries it');
  await call(t, app, { method: 'DELETE', url: `/v1/annotations/${inContext.id}` }, 200);
  await call(
    t,
    app,
    { method: 'POST', url: '/v1/annotations', payload: { ...body, decision: 'label', label: '7' } },
    400,
  );
  await call(t, app, { method: 'POST', url: '/v1/annotations', payload: { ...body, extra: 1 } }, 400);
  await call(t, keyed, { method: 'POST', url: '/v1/annotations', payload: body }, 401);
  const bykey = await call(
    t,
    keyed,
    { method: 'POST', url: '/v1/annotations', payload: body, headers: { authorization: `Bearer ${KEY}` } },
    201,
  );
  t.equal(
    JSON.parse(bykey.body).annotator,
    'tester',
    "with keys the key's name is the annotator, not the body's",
  );

  const lookup = await call(
    t,
    app,
    {
      method: 'POST',
      url: '/v1/annotations/lookup',
      payload: {
        pairs: [
          { s1: S1, s2: S2 },
          { s1: S2, s2: S1 },
        ],
        annotator: 'ana',
      },
    },
    200,
  );
  t.same(
    JSON.parse(lookup.body).annotations.map((a: { label: string } | null) => a?.label ?? null),
    ['4<is', null],
  );
  const summary = JSON.parse((await call(t, app, { url: '/v1/annotations/summary?scheme=turku' }, 200)).body);
  t.match(summary, { total: 1, byLabel: { 'turku:4<is': 1 } });
  const report = JSON.parse((await call(t, app, { url: '/v1/annotations/report?scheme=turku' }, 200)).body);
  t.match(
    report,
    { pairs: 1, positives: 1, ties: 0, agreement: { shared: 0 } },
    'the report over the same record',
  );
  await call(t, app, { url: '/v1/annotations/report?since=yesterday' }, 400);
  const jsonl = await call(t, app, { url: '/v1/annotations?scheme=turku' }, 200);
  t.match(jsonl.headers['content-disposition'], /attachment; filename="annotations.jsonl"/);
  t.match(JSON.parse(jsonl.body.trim()), { s1: S1, s2: S2, label: '4<is', annotator: 'ana' });
  const tsv = await call(t, app, { url: '/v1/annotations?format=tsv&annotator=ana' }, 200);
  t.equal(tsv.body, `s1\ts2\tlabel\n${S1}\t${S2}\t4<is\n`);
  await call(t, app, { url: '/v1/annotations?format=xml' }, 400);
  await call(t, locked, { url: '/v1/annotations' }, 401);

  const tested = JSON.parse(bykey.body).id;
  const others = { authorization: 'Bearer other-key-0000' };
  const two = svc.app({
    auth: { keys: [...keys, { name: 'other', key: 'other-key-0000' }], protectAll: false },
  });
  await call(t, two, { method: 'DELETE', url: `/v1/annotations/${tested}`, headers: others }, 404);
  await call(
    t,
    keyed,
    { method: 'DELETE', url: `/v1/annotations/${tested}`, headers: { authorization: `Bearer ${KEY}` } },
    200,
  );
  await call(t, app, { method: 'DELETE', url: `/v1/annotations/${first.id}` }, 200);
  await call(t, app, { method: 'DELETE', url: `/v1/annotations/${first.id}` }, 404);
  await call(t, app, { method: 'DELETE', url: '/v1/annotations/not-an-id' }, 400);
});

t.test('search and job results can carry the word diff', async (t) => {
  const res = await call(
    t,
    app,
    { method: 'POST', url: '/v1/search', payload: { text: S1, k: 3, diff: true } },
    200,
  );
  const cands = JSON.parse(res.body).results[0].candidates;
  t.ok(cands.length > 0);
  for (const c of cands) t.ok(c.diff?.a && c.diff?.b, 'each candidate has its diff');
  const without = await call(t, app, { method: 'POST', url: '/v1/search', payload: { text: S1, k: 3 } }, 200);
  t.notOk(JSON.parse(without.body).results[0].candidates[0].diff, 'no diff unless asked');

  const job = await svc.jobs.create({
    scope: { kind: 'range', start: 0, end: 30 },
    k: 4,
    minCosine: 0.5,
    batchSize: 8,
  });
  const events = await call(t, app, { url: `/v1/jobs/${job.id}/events` }, 200);
  t.match(events.headers['content-type'], /^text\/event-stream/);
  const progress = [...events.body.matchAll(/event: progress\ndata: (.*)\n\n/g)].map((m) =>
    JSON.parse(m[1] as string),
  );
  t.ok(progress.length >= 1, `${progress.length} progress events`);
  const last = progress[progress.length - 1];
  t.equal(last.state, 'done');
  t.equal(last.processed, 30);
  t.match(events.body, /event: end\n/, 'ends once the job has finished');
  const results = await call(t, app, { url: `/v1/jobs/${job.id}/results?diff=true&limit=5` }, 200);
  const pairs = results.body
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  t.ok(pairs.length > 0, 'the job found pairs');
  for (const p of pairs) t.ok(p.diff?.a, 'each pair has its diff');
  await call(t, app, { url: '/v1/jobs/00000000-0000-4000-8000-000000000000/events' }, 404);
});

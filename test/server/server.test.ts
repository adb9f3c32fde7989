import t from 'tap';
import type { SearchResponse } from '../../src/search/types.js';
import { HAS_RERANKER, startTestService } from '../helpers/service.js';

const svc = await startTestService(200);
t.teardown(() => svc.close());
const app = svc.app();

async function search(body: unknown) {
  const res = await app.inject({ method: 'POST', url: '/v1/search', payload: body as object });
  return { status: res.statusCode, body: res.json() as SearchResponse & { code?: string; field?: string } };
}

t.test('search finds the other translation of a verse, with every candidate field', async (t) => {
  // A rewording of Proverbs 1:2 that is in neither translation.
  const { status, body } = await search({
    text: 'To learn wisdom and discipline, and to grasp words of insight.',
    k: 5,
  });
  t.equal(status, 200);
  t.equal(body.results.length, 1);
  const c = body.results[0]?.candidates ?? [];
  t.equal(c.length, 5);
  const top3 = c.slice(0, 3).map((x) => x.meta?.ref);
  t.ok(top3.includes('Proverbs 1:2'), `Proverbs 1:2 in the top 3 (got ${top3.join(', ')})`);
  for (const x of c) {
    t.type(x.id, 'number');
    t.ok(x.cosine > 0 && x.cosine <= 1.0001);
    t.ok(x.annRank >= 1);
    t.type(x.lexical.bleu, 'number');
    t.type(x.lexical.charNgramCosine, 'number');
    if (HAS_RERANKER) {
      t.type(x.label, 'string');
      const p = Object.values(x.probabilities ?? {});
      t.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-5, 'probabilities sum to 1');
    }
  }
  t.same(
    c.map((x) => x.rerankRank ?? x.annRank),
    [1, 2, 3, 4, 5],
    'candidates come in final rank order',
  );
  for (const k of ['encodeMs', 'searchMs', 'rerankMs', 'totalMs'] as const) t.type(body.timings[k], 'number');
});

t.test('batches, duplicates of the query, rerank off', async (t) => {
  const texts = [
    'to receive instruction in wise dealing, in righteousness, justice, and equity;',
    'to know wisdom and instruction',
  ];
  const { status, body } = await search({ texts, k: 3, rerank: false });
  t.equal(status, 200);
  t.equal(body.results.length, 2);
  const first = body.results[0]?.candidates ?? [];
  t.notOk(
    first.some((x) => x.text === texts[0]),
    'the query itself is excluded by default',
  );
  t.equal(first[0]?.meta?.ref, 'Proverbs 1:3', 'its KJV twin is the top hit');
  t.equal(first[0]?.meta?.version, 'KJV');
  t.notOk(
    first.some((x) => x.label !== undefined),
    'no labels without rerank',
  );
  t.equal(first[0]?.rerankRank, undefined);

  const kept = await search({ text: texts[0], k: 3, rerank: false, excludeDuplicates: false });
  const hit = kept.body.results[0]?.candidates[0];
  t.equal(hit?.text, texts[0]);
  t.ok((hit?.cosine ?? 0) > 0.999, 'exact duplicate has cosine 1');
});

t.test('lexical and label filters hold on every candidate', async (t) => {
  const q = 'Hear, my son, the teaching of your father, and do not reject the instruction of your mother.';
  const lex = await search({
    text: q,
    k: 20,
    candidates: 100,
    rerank: false,
    filter: { bleuMax: 14, plrMax: 1 },
  });
  t.equal(lex.status, 200);
  const cands = lex.body.results[0]?.candidates ?? [];
  t.ok(cands.length > 0);
  for (const c of cands) {
    t.ok(c.lexical.bleu <= 14, `bleu ${c.lexical.bleu} <= 14`);
    t.ok(c.lexical.plr !== null && c.lexical.plr < 1, `plr ${c.lexical.plr} < 1`);
  }
  const minTok = await search({ text: q, k: 50, rerank: false, filter: { minTokens: 15 } });
  for (const c of minTok.body.results[0]?.candidates ?? []) t.ok(c.text.split(/\s+/).length >= 10);

  const cos = await search({ text: q, k: 50, rerank: false, minCosine: 0.5 });
  for (const c of cos.body.results[0]?.candidates ?? []) t.ok(c.cosine >= 0.5);

  if (HAS_RERANKER) {
    const lab = await search({ text: q, k: 10, candidates: 40, labels: ['paraphrase'], minProbability: 0.9 });
    t.equal(lab.status, 200);
    for (const c of lab.body.results[0]?.candidates ?? []) {
      t.equal(c.label, 'paraphrase');
      t.ok((c.probabilities?.paraphrase ?? 0) >= 0.9);
    }
  }
});

t.test('bad requests are 4xx JSON errors naming the field', async (t) => {
  const cases: Array<[unknown, number, string | undefined]> = [
    [{ text: 'x', k: 101 }, 400, 'k'],
    [{ text: 'x', k: 0 }, 400, 'k'],
    [{ text: 'x', k: 2.5 }, 400, 'k'],
    [{ texts: Array.from({ length: 65 }, () => 'a') }, 400, 'texts'],
    [{ text: 'a'.repeat(2001) }, 400, 'text'],
    [{ text: '   ' }, 400, 'text'],
    [{ text: 'x', texts: ['y'] }, 400, 'text'],
    [{}, 400, 'text'],
    [{ text: 'x', nprobe: -1 }, 400, 'nprobe'],
    [{ text: 'x', surprise: true }, 400, undefined],
    [{ text: 'x', filter: { bleuMin: 30, bleuMax: 10 } }, 400, 'filter.bleuMin'],
    [{ texts: ['ok', 5] }, 400, 'texts[1]'],
  ];
  for (const [body, status, field] of cases) {
    const r = await search(body);
    t.equal(r.status, status, JSON.stringify(body).slice(0, 60));
    t.equal(r.body.code, 'BAD_INPUT');
    if (field !== undefined) t.equal(r.body.field, field);
  }
  const notJson = await app.inject({
    method: 'POST',
    url: '/v1/search',
    headers: { 'content-type': 'application/json' },
    payload: '{"text": ',
  });
  t.equal(notJson.statusCode, 400);
  t.equal(notJson.json().code, 'BAD_INPUT');
  const huge = await app.inject({
    method: 'POST',
    url: '/v1/search',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ text: 'a'.repeat(2 << 20) }),
  });
  t.equal(huge.statusCode, 413);
  t.equal(huge.json().code, 'PAYLOAD_TOO_LARGE');
  const text = await app.inject({
    method: 'POST',
    url: '/v1/search',
    headers: { 'content-type': 'text/plain' },
    payload: 'hi',
  });
  t.equal(text.statusCode, 415);
  t.equal((await app.inject({ method: 'GET', url: '/v1/nothing' })).json().code, 'NOT_FOUND');
});

t.test(
  'classify: labels and probabilities for pairs',
  { skip: !HAS_RERANKER && 'no default reranker' },
  async (t) => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/classify',
      payload: {
        pairs: [
          ['A soft answer turns away wrath.', 'A gentle reply calms anger.'],
          { s1: 'A soft answer turns away wrath.', s2: 'Wheat prices rose sharply in spring.' },
        ],
      },
    });
    t.equal(res.statusCode, 200);
    const body = res.json() as {
      labels: string[];
      results: Array<{ label: string; probabilities: Record<string, number> }>;
    };
    t.same(body.labels, ['not_paraphrase', 'paraphrase']);
    const [para, unrelated] = body.results;
    t.ok((para?.probabilities.paraphrase ?? 0) > (unrelated?.probabilities.paraphrase ?? 1));
    t.equal(unrelated?.label, 'not_paraphrase');
    const bad = await app.inject({ method: 'POST', url: '/v1/classify', payload: { pairs: [['only one']] } });
    t.equal(bad.statusCode, 400);
    t.match(bad.json().field, /^pairs\[0\]/);
  },
);

t.test('sentences, index info, health, metrics', async (t) => {
  const s = await app.inject({ method: 'GET', url: '/v1/sentences/1' });
  // Proverbs 1:1 KJV differs from WEB only in punctuation: de-duplicated, so id 1 is Proverbs 1:2 WEB.
  t.same(s.json(), {
    id: 1,
    text: 'to know wisdom and instruction; to discern the words of understanding;',
    meta: { ref: 'Proverbs 1:2', version: 'WEB' },
  });
  t.equal((await app.inject({ method: 'GET', url: '/v1/sentences/999999' })).statusCode, 404);
  // Not digits: an id the user gave (a record's, a write's), here none.
  const bad = await app.inject({ method: 'GET', url: '/v1/sentences/abc' });
  t.equal(bad.statusCode, 404);
  t.equal(bad.json().field, 'id');
  const info = (await app.inject({ method: 'GET', url: '/v1/index' })).json();
  t.equal(info.sentences, info.manifest.ntotal);
  t.equal(info.manifest.model.id, 'all-minilm-l6-v2');
  t.same((await app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' });
  const ready = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 200);
  t.same(ready.json().checks, { models: true, index: true, ...(HAS_RERANKER ? { reranker: true } : {}) });
  const m = await app.inject({ method: 'GET', url: '/metrics' });
  t.match(m.headers['content-type'], /text\/plain/);
  t.match(
    m.body,
    /paramine_http_request_duration_seconds_count\{method="POST",route="\/v1\/search",status="200"\} \d+/,
  );
  t.match(m.body, /paramine_encoder_batch_size_count \d+/);
  t.match(m.body, /paramine_stage_duration_seconds_count\{stage="search"\} \d+/);
  const spec = await app.inject({ method: 'GET', url: '/openapi.yaml' });
  t.match(spec.body, /^openapi: 3\.1/);
});

t.test('API keys: admin routes always, every route with protectAll; health stays open', async (t) => {
  const open = svc.app({ auth: { keys: [{ name: 'tester', key: 'secret-key-1' }], protectAll: false } });
  t.equal(
    (await open.inject({ method: 'POST', url: '/v1/search', payload: { text: 'wisdom', k: 1 } })).statusCode,
    200,
  );
  const locked = svc.app({ auth: { keys: [{ name: 'tester', key: 'secret-key-1' }], protectAll: true } });
  const no = await locked.inject({ method: 'POST', url: '/v1/search', payload: { text: 'wisdom', k: 1 } });
  t.equal(no.statusCode, 401);
  t.equal(no.json().code, 'UNAUTHORIZED');
  const wrong = await locked.inject({
    method: 'GET',
    url: '/v1/index',
    headers: { authorization: 'Bearer secret-key-2' },
  });
  t.equal(wrong.statusCode, 401);
  const yes = await locked.inject({
    method: 'POST',
    url: '/v1/search',
    headers: { authorization: 'Bearer secret-key-1' },
    payload: { text: 'wisdom', k: 1 },
  });
  t.equal(yes.statusCode, 200);
  t.equal((await locked.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  t.equal((await locked.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
});

t.test('named keys: write routes need one, the handler sees its name, a wrong key is refused', async (t) => {
  const seen: Array<string | null> = [];
  const keyed = svc.app({
    auth: {
      keys: [
        { name: 'alice', key: 'alice-key-123' },
        { name: 'bob', key: 'bob-key-4567' },
      ],
      protectAll: false,
    },
    // A route plugin registered like the built-in ones, with its own auth hook.
    plugins: [
      async (scope, { auth }) => {
        scope.addHook('onRequest', auth.require('write'));
        scope.post('/v1/whoami', async (req) => {
          seen.push(req.apiKeyName);
          return { name: req.apiKeyName };
        });
      },
    ],
  });
  const as = (key?: string) => (key === undefined ? {} : { authorization: `Bearer ${key}` });
  const job = {
    method: 'POST' as const,
    url: '/v1/jobs',
    payload: { k: 2, scope: { kind: 'range', start: 0, end: 2 } },
  };
  t.equal((await keyed.inject(job)).statusCode, 401, 'starting a job needs a key');
  const started = await keyed.inject({ ...job, headers: as('bob-key-4567') });
  t.equal(started.statusCode, 202);
  await svc.jobs.wait(started.json().id, undefined, 20);
  t.equal((await keyed.inject({ method: 'GET', url: '/v1/jobs' })).statusCode, 200, 'listing is a read');
  t.equal((await keyed.inject({ method: 'POST', url: '/v1/whoami' })).statusCode, 401);
  const who = await keyed.inject({ method: 'POST', url: '/v1/whoami', headers: as('alice-key-123') });
  t.same(who.json(), { name: 'alice' });
  const wrong = await keyed.inject({
    method: 'POST',
    url: '/v1/search',
    headers: as('alice-key-124'),
    payload: { text: 'wisdom', k: 1, rerank: false },
  });
  t.equal(wrong.statusCode, 401, 'a key that is sent is checked even on read routes');
  t.same(seen, ['alice']);
  const bearerless = await keyed.inject({
    method: 'POST',
    url: '/v1/whoami',
    headers: { authorization: 'alice-key-123' },
  });
  t.equal(bearerless.statusCode, 401);
});

t.test('classify without a reranker is 503, not a crash', async (t) => {
  const bare = await startTestService(20, false);
  t.teardown(() => bare.close());
  const a = bare.app();
  const res = await a.inject({ method: 'POST', url: '/v1/classify', payload: { pairs: [['a b', 'c d']] } });
  t.equal(res.statusCode, 503);
  t.equal(res.json().code, 'UNAVAILABLE');
  const lab = await a.inject({
    method: 'POST',
    url: '/v1/search',
    payload: { text: 'wisdom', labels: ['paraphrase'] },
  });
  t.equal(lab.statusCode, 400);
  t.equal(lab.json().field, 'labels');
  t.equal((await a.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  await bare.service.close();
  const closed = await a.inject({ method: 'GET', url: '/readyz' });
  t.equal(closed.statusCode, 503, 'not ready once the models and index are closed');
  t.same(closed.json(), { ready: false, checks: { models: false, index: false } });
});

t.test(
  'rerank work per request is bounded; control-character queries are empty; bad URLs keep the error shape',
  async (t) => {
    const texts = Array.from({ length: 10 }, (_, i) => `wisdom and instruction number ${i}`);
    const big = await search({ texts, k: 10, candidates: 300 });
    if (HAS_RERANKER) {
      t.equal(big.status, 400);
      t.equal(big.body.field, 'candidates');
    }
    t.equal((await search({ texts, k: 10, candidates: 300, rerank: false })).status, 200);
    const ctl = await search({ text: '\u0000\u200b' });
    t.equal(ctl.status, 400);
    t.equal(ctl.body.field, 'text');
    const url = await app.inject({ method: 'GET', url: '/v1/sentences/%ZZ' });
    t.equal(url.statusCode, 400);
    t.equal(url.json().code, 'BAD_INPUT');
  },
);

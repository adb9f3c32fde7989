/**
 * Mining jobs over a real small index (demo verses, real encoder): the pairs equal a brute-force
 * computation over the same vectors, filters, group exclusion, margin and pair de-duplication hold,
 * clusters are the connected components of the pairs; the HTTP routes validate, stream and cancel.
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { VectorFile } from '../../src/index/index.js';
import { FINISHED, type JobRecord, type MinedPair, pairKey, ratioMargin } from '../../src/jobs/index.js';
import { FILTER_PRESETS, rampedBatchSize } from '../../src/jobs/spec.js';
import { passesLexical } from '../../src/search/lexical.js';
import { validateResponse } from '../helpers/openapi.js';
import { startTestService } from '../helpers/service.js';

const svc = await startTestService(300, false);
t.teardown(() => svc.close());
const { jobs, jobStore } = svc;
const n = svc.service.index.ntotal;

// Brute force over the same vectors: queries from vectors.f16 (what jobs read), the database encoded
// again in fp32 (what the flat index holds).
const texts = [...svc.service.store.range(0, n)].map((r) => r.record.text);
const queryVecs = await (async () => {
  const v = await VectorFile.open(svc.index);
  if (v === undefined) throw new Error('the index kept no vectors');
  const rows = await v.read(0, n);
  await v.close();
  return rows;
})();
const dbVecs = await svc.service.encoder.encode(texts);
const dim = svc.service.index.dim;
const cos = (q: number, d: number) => {
  let s = 0;
  for (let i = 0; i < dim; i++) s += (queryVecs[q * dim + i] as number) * (dbVecs[d * dim + i] as number);
  return s;
};
/** Each sentence's neighbours (itself excluded), best first, with cosines. */
const neighbours = texts.map((_, q) => {
  const row: Array<{ id: number; c: number }> = [];
  for (let d = 0; d < n; d++) if (d !== q) row.push({ id: d, c: cos(q, d) });
  return row.sort((a, b) => b.c - a.c);
});

async function run(spec: object): Promise<{ job: JobRecord; pairs: MinedPair[] }> {
  const created = await jobs.create(spec);
  const job = await jobs.wait(created.id, undefined, 20);
  return { job, pairs: [...jobStore.pairs(job.id)].map((p) => p.pair) };
}

/** Pairs whose presence may legitimately differ: their cosine ties the k-th neighbour within 1e-4. */
function boundaryTie(a: number, b: number, k: number): boolean {
  const near = (q: number, d: number) => {
    const kth = neighbours[q]?.[k - 1]?.c ?? -2;
    return Math.abs(cos(q, d) - kth) < 1e-4;
  };
  return near(a, b) || near(b, a);
}

function expectedPairs(k: number, accept: (a: number, b: number) => boolean): Set<string> {
  const out = new Set<string>();
  neighbours.forEach((row, q) => {
    for (const { id } of row.slice(0, k)) if (accept(q, id)) out.add(pairKey(q, id));
  });
  return out;
}

function compareSets(t: Test, got: MinedPair[], expected: Set<string>, k: number, atLeast = 100): void {
  const keys = got.map((p) => pairKey(p.a.id as number, p.b.id as number));
  t.equal(new Set(keys).size, keys.length, 'no pair twice (a-b = b-a)');
  const gotSet = new Set(keys);
  const missing = [...expected].filter((x) => !gotSet.has(x));
  const extra = keys.filter((x) => !expected.has(x));
  const real = (xs: string[]) =>
    xs.filter((x) => {
      const [a, b] = x.split(':').map(Number) as [number, number];
      return !boundaryTie(a, b, k);
    });
  t.same(real(missing), [], `no expected pair missing (${missing.length} boundary ties aside)`);
  t.same(real(extra), [], 'no unexpected pair');
  t.ok(expected.size >= atLeast, `a real amount of pairs (${expected.size})`);
}

t.test('all pairs, k = 5: the brute-force set, cosines and texts right, no self pairs', async (t) => {
  const { job, pairs } = await run({ k: 5, batchSize: 32 });
  t.equal(job.state, 'done');
  t.equal(job.processed, n);
  t.equal(job.pairs, pairs.length);
  compareSets(
    t,
    pairs,
    expectedPairs(5, () => true),
    5,
  );
  for (const p of pairs.slice(0, 50)) {
    t.not(p.a.id, p.b.id);
    t.equal(p.a.text, texts[p.a.id as number]);
    t.equal(p.b.text, texts[p.b.id as number]);
    t.ok(Math.abs(p.cosine - cos(p.a.id as number, p.b.id as number)) < 1e-3, 'cosine of the pair');
    t.ok(p.a.meta && 'ref' in p.a.meta, 'metadata carried');
  }
});

t.test('filters: minCosine and the MultiPIT filters, as the brute force applies them', async (t) => {
  // The `multipit` preset also scopes pairs to a trend or URL (group tables); its filters alone here.
  const { pairs } = await run({ k: 5, minCosine: 0.7, filter: FILTER_PRESETS.multipit, batchSize: 64 });
  const f = FILTER_PRESETS.multipit;
  const expected = expectedPairs(
    5,
    (a, b) => cos(a, b) >= 0.7 && passesLexical(texts[a] as string, texts[b] as string, f),
  );
  compareSets(t, pairs, expected, 5, 20);
  for (const p of pairs) {
    t.ok(p.cosine >= 0.7 - 1e-6);
    t.ok(p.lexical.bleu <= 14, 'BLEU <= 14');
  }
});

t.test('excludeSameGroup drops pairs sharing the key; presets merge with explicit filters', async (t) => {
  const all = await run({ k: 5 });
  const sameVersion = all.pairs.filter((p) => p.a.meta?.version === p.b.meta?.version).length;
  t.ok(sameVersion > 0, `the unfiltered run has same-version pairs (${sameVersion})`);
  const { pairs } = await run({ k: 5, excludeSameGroup: 'version' });
  t.ok(pairs.length > 0);
  t.equal(pairs.filter((p) => p.a.meta?.version === p.b.meta?.version).length, 0, 'none share a version');
  const version = (id: number) => svc.service.store.get(id)?.meta?.version;
  const expected = expectedPairs(5, (a, b) => version(a) !== version(b));
  compareSets(t, pairs, expected, 5);
});

t.test('margin: each pair scored by the ratio margin, min filters on it', async (t) => {
  const { pairs } = await run({ k: 4, margin: { k: 4 } });
  const meanNN = (q: number) =>
    (neighbours[q] as Array<{ c: number }>).slice(0, 4).reduce((s, x) => s + x.c, 0) / 4;
  for (const p of pairs.slice(0, 40)) {
    const a = p.a.id as number;
    const b = p.b.id as number;
    const want = ratioMargin(cos(a, b), meanNN(a), meanNN(b));
    t.ok(Math.abs((p.margin as number) - want) < 2e-3, `margin ${p.margin} ~ ${want}`);
  }
  const strict = await run({ k: 4, margin: { k: 4, min: 1.05 } });
  t.ok(strict.pairs.length > 0 && strict.pairs.length < pairs.length, 'min margin keeps some, drops some');
  t.ok(strict.pairs.every((p) => (p.margin as number) >= 1.05));
});

t.test('clusters are the connected components of the accepted pairs', async (t) => {
  const { job, pairs } = await run({ k: 5, minCosine: 0.6, cluster: true });
  const clusters = [...jobStore.clusters(job.id)].map((c) => c.ids);
  t.equal(job.clusters, clusters.length);
  // Components by BFS over the pair graph.
  const adj = new Map<number, number[]>();
  for (const p of pairs) {
    const a = p.a.id as number;
    const b = p.b.id as number;
    adj.set(a, [...(adj.get(a) ?? []), b]);
    adj.set(b, [...(adj.get(b) ?? []), a]);
  }
  const seen = new Set<number>();
  const components: number[][] = [];
  for (const start of [...adj.keys()].sort((x, y) => x - y)) {
    if (seen.has(start)) continue;
    const comp: number[] = [];
    const queue = [start];
    seen.add(start);
    while (queue.length > 0) {
      const x = queue.shift() as number;
      comp.push(x);
      for (const y of adj.get(x) ?? []) {
        if (seen.has(y)) continue;
        seen.add(y);
        queue.push(y);
      }
    }
    components.push(comp.sort((x, y) => x - y));
  }
  t.same(clusters, components);
  t.ok(
    clusters.some((c) => c.length >= 3),
    'some set is transitive (3+ members)',
  );
});

t.test('inline sentences and a data-directory file as scopes', async (t) => {
  const { pairs } = await run({
    k: 3,
    scope: {
      kind: 'sentences',
      sentences: ['The proverbs of Solomon, son of David.', 'Unrelated words about engines'],
    },
  });
  t.ok(pairs.length >= 3);
  t.ok(
    pairs.some((p) => /proverbs of Solomon/i.test(p.b.text)),
    'a neighbour about the proverbs of Solomon',
  );
  writeFileSync(join(svc.dataDir, 'q.txt'), 'My son, hear the instruction of your father.\n');
  const fromFile = await run({ k: 2, scope: { kind: 'file', path: 'q.txt' } });
  t.equal(fromFile.job.total, 1);
  t.equal(fromFile.pairs.length, 2);
  await t.rejects(jobs.create({ scope: { kind: 'file', path: '../index/manifest.json' } }), {
    code: 'BAD_INPUT',
    field: 'scope.path',
  });
  await t.rejects(jobs.create({ scope: { kind: 'file', path: '/etc/passwd' } }), { code: 'BAD_INPUT' });
  await t.rejects(jobs.create({ scope: { kind: 'file', path: 'nope.txt' } }), { code: 'FILE_NOT_FOUND' });
});

t.test('HTTP: create, poll, stream with offset, list, errors', async (t) => {
  const app = svc.app();
  const post = (payload: object) => app.inject({ method: 'POST', url: '/v1/jobs', payload });
  const res = await post({ k: 3, scope: { kind: 'range', start: 0, end: 100 }, batchSize: 10 });
  t.equal(res.statusCode, 202, res.body);
  validateResponse('POST', '/v1/jobs', 202, res.headers['content-type'], res.body);
  const id = res.json().id as string;
  t.equal(res.headers.location, `/v1/jobs/${id}`);
  // follow=true streams until the job ends: the whole result set.
  const followed = await app.inject({ method: 'GET', url: `/v1/jobs/${id}/results?follow=true` });
  t.equal(followed.statusCode, 200);
  t.match(followed.headers['content-type'], /application\/x-ndjson/);
  validateResponse('GET', `/v1/jobs/${id}/results`, 200, followed.headers['content-type'], followed.body);
  const status = await app.inject({ method: 'GET', url: `/v1/jobs/${id}` });
  validateResponse('GET', `/v1/jobs/${id}`, 200, status.headers['content-type'], status.body);
  const job = status.json();
  t.equal(job.state, 'done');
  t.equal(job.processed, 100);
  const lines = followed.body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.equal(lines.length, job.pairs);
  t.same(
    lines.map((l) => l.seq),
    lines.map((_, i) => i),
    'sequence numbers 0..n-1',
  );
  const tail = await app.inject({ method: 'GET', url: `/v1/jobs/${id}/results?offset=5&limit=3` });
  t.same(
    tail.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l)),
    lines.slice(5, 8),
    'offset and limit resume the stream',
  );
  const list = await app.inject({ method: 'GET', url: '/v1/jobs' });
  validateResponse('GET', '/v1/jobs', 200, list.headers['content-type'], list.body);
  t.ok(list.json().jobs.some((j: { id: string }) => j.id === id));

  for (const [body, field] of [
    [{ k: 0 }, 'k'],
    [{ k: 3, bogus: 1 }, 'job'],
    [{ scope: { kind: 'range', start: 5, end: 5 } }, 'scope.start'],
    [{ scope: { kind: 'range', start: 0, end: n + 1 } }, 'scope.end'],
    [{ filter: { bleuMin: 30, bleuMax: 10 } }, 'filter.bleuMin'],
    [{ rerank: {} }, 'rerank'],
    [{ scope: { kind: 'file', path: '../../etc/passwd' } }, 'scope.path'],
  ] as const) {
    const r = await post(body);
    t.equal(r.statusCode, 400, `${JSON.stringify(body)} -> 400 (${r.body})`);
    validateResponse('POST', '/v1/jobs', 400, r.headers['content-type'], r.body);
    t.equal(r.json().field, field);
  }
  const unknownIndex = await post({ index: 'elsewhere' });
  t.equal(unknownIndex.statusCode, 404);
  validateResponse('POST', '/v1/jobs', 404, unknownIndex.headers['content-type'], unknownIndex.body);
  const missing = await app.inject({ method: 'GET', url: '/v1/jobs/00000000-0000-4000-8000-000000000000' });
  t.equal(missing.statusCode, 404);
  validateResponse(
    'GET',
    '/v1/jobs/00000000-0000-4000-8000-000000000000',
    404,
    missing.headers['content-type'],
    missing.body,
  );
  const badId = await app.inject({ method: 'GET', url: '/v1/jobs/not-a-uuid/results' });
  t.equal(badId.statusCode, 400);
});

t.test('cancel: a queued job and a running one stop; finished jobs stay as they are', async (t) => {
  const app = svc.app();
  // A slow job (margin, small batches) holds the single slot; the second waits in the queue.
  const slow = await jobs.create({ k: 10, margin: { k: 10 }, batchSize: 2 });
  const queued = await jobs.create({ k: 2 });
  t.equal(jobs.get(queued.id).state, 'queued');
  const c1 = await app.inject({ method: 'DELETE', url: `/v1/jobs/${queued.id}` });
  t.equal(c1.statusCode, 200);
  validateResponse('DELETE', `/v1/jobs/${queued.id}`, 200, c1.headers['content-type'], c1.body);
  t.equal(c1.json().state, 'cancelled');
  t.equal(c1.json().processed, 0);
  const c2 = await app.inject({ method: 'DELETE', url: `/v1/jobs/${slow.id}` });
  const cancelled = c2.json();
  t.equal(cancelled.state, 'cancelled');
  t.ok(cancelled.processed < n, `stopped early (${cancelled.processed}/${n})`);
  const pairs = [...jobStore.pairs(slow.id)].length;
  t.equal(pairs, cancelled.pairs, 'results so far stay readable');
  const again = await app.inject({ method: 'DELETE', url: `/v1/jobs/${slow.id}` });
  t.equal(again.json().state, 'cancelled');
  t.ok(FINISHED.includes(jobs.get(slow.id).state));
});

t.test(
  'a run starts with small batches, so progress moves at once, and doubles up to batchSize',
  async (t) => {
    t.same(
      [0, 1, 2, 3, 4].map((i) => rampedBatchSize(i, 128)),
      [32, 64, 128, 128, 128],
    );
    t.equal(rampedBatchSize(0, 4), 4, 'never above batchSize');
  },
);

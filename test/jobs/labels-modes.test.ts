/**
 * Labels through the service as a user meets them (real encoder, student and teacher): classify and search
 * give one score per unordered pair and name the model that labeled it in each mode; a labeled job emits each
 * pair with the lower id first; its review lists the least sure pairs first at the labeling model's cut;
 * annotations keep the model whose probabilities they show.
 */
import t from 'tap';
import { validateResponse } from '../helpers/openapi.js';
import { HAS_RERANKER, startTestService } from '../helpers/service.js';

const TEACHER = 'paramine-paraphrase-mpnet-base';

t.test('modes, order, review', { skip: !HAS_RERANKER }, async (t) => {
  const svc = await startTestService(120);
  t.teardown(() => svc.close());
  const app = svc.app();
  const { cuts, student } = svc.service.labelCuts;
  t.ok(student && cuts[student] !== undefined && cuts[TEACHER] !== undefined, 'both cuts known');

  const storm = 'A powerful storm knocked out power to more than 120,000 homes on Tuesday.';
  const lost = 'More than 120,000 households lost electricity after a powerful storm on Tuesday.';
  for (const mode of ['fast', 'balanced', 'best'] as const) {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/classify',
      payload: {
        pairs: [
          [storm, lost],
          [lost, storm],
        ],
        labels: { mode },
      },
    });
    t.equal(res.statusCode, 200, mode);
    validateResponse('POST', '/v1/classify', 200, res.headers['content-type'], res.body);
    const [x, y] = res.json().results as Array<{ probabilities: Record<string, number>; model: string }>;
    t.same(x?.probabilities, y?.probabilities, `${mode}: P(a, b) = P(b, a)`);
    if (mode === 'fast') t.equal(x?.model, student);
    if (mode === 'best') t.equal(x?.model, TEACHER);
  }
  const bad = await app.inject({
    method: 'POST',
    url: '/v1/classify',
    payload: { pairs: [[storm, lost]], labels: { mode: 'fastest' } },
  });
  t.equal(bad.statusCode, 400, 'an unknown mode is refused');

  const search = await app.inject({
    method: 'POST',
    url: '/v1/search',
    payload: { text: 'In the beginning God created the heavens and the earth.', labels: { mode: 'best' } },
  });
  t.equal(search.statusCode, 200);
  validateResponse('POST', '/v1/search', 200, search.headers['content-type'], search.body);
  const cands = search.json().results[0].candidates as Array<{ labeledBy: string }>;
  t.ok(
    cands.length > 0 && cands.every((c) => c.labeledBy === TEACHER),
    'search: best labels with the teacher',
  );

  const job = await svc.jobs.create({ k: 4, rerank: { mode: 'balanced' } });
  const done = await svc.jobs.wait(job.id, undefined, 20);
  t.equal(done.state, 'done');
  const pairs = [...svc.jobStore.pairs(job.id)].map((p) => p.pair);
  t.ok(pairs.length > 50, `${pairs.length} pairs`);
  t.ok(
    pairs.every((p) => (p.a.id as number) < (p.b.id as number)),
    'every pair with the lower id as side a',
  );
  const models = new Set(pairs.map((p) => p.labeledBy));
  t.ok(models.has(student) && models.has(TEACHER), 'balanced: both models labeled some');

  const review = await app.inject({ method: 'GET', url: `/v1/jobs/${job.id}/review?limit=40` });
  t.equal(review.statusCode, 200);
  validateResponse('GET', `/v1/jobs/${job.id}/review`, 200, review.headers['content-type'], review.body);
  const listed = review.json().pairs as Array<{
    margin: number;
    cut: number;
    labeledBy: string;
    probabilities: Record<string, number>;
  }>;
  t.equal(listed.length, 40);
  const margins = listed.map((p) => p.margin);
  t.ok(
    margins.every((m, i) => i === 0 || Math.floor(m * 100) >= Math.floor((margins[i - 1] as number) * 100)),
    'least sure first (within 0.01 bands)',
  );
  for (const p of listed) {
    t.equal(p.cut, cuts[p.labeledBy], "each pair's cut is its model's");
    t.ok(Math.abs(Math.abs((p.probabilities.paraphrase as number) - p.cut) - p.margin) < 1e-12);
  }
  const all = [...svc.jobStore.pairs(job.id)].map((r) => {
    const p = r.pair;
    return Math.abs((p.probabilities?.paraphrase as number) - (cuts[p.labeledBy as string] as number));
  });
  const fortieth = [...all].sort((a, b) => a - b)[39] as number;
  t.ok((margins.at(-1) as number) <= fortieth + 0.01, 'the 40 are the 40 least sure (to the band)');

  const first = listed[0] as (typeof listed)[number] & { a: { text: string }; b: { text: string } };
  const saved = await app.inject({
    method: 'POST',
    url: '/v1/annotations',
    payload: {
      s1: first.a.text,
      s2: first.b.text,
      scheme: 'binary',
      decision: 'accept',
      probabilities: first.probabilities,
      model: first.labeledBy,
      mode: 'balanced',
    },
  });
  t.equal(saved.statusCode, 201);
  t.equal(saved.json().model, first.labeledBy, 'the annotation keeps the model it was shown');
});

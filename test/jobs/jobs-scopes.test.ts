/**
 * Scoped mining over a real small index (demo verses in two translations; chapter = "paper", translation
 * = "section", a date per verse): withinGroup never pairs across groups and finds exactly the in-group
 * pairs of a global search filtered afterwards; excludeSame and windows honour their bounds; the flat
 * exact path and the index agree; bad keys and malformed windows get 4xx errors with codes.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { VectorFile } from '../../src/index/index.js';
import { buildIndex } from '../../src/indexer/build.js';
import { type JobRecord, type MinedPair, pairKey } from '../../src/jobs/index.js';
import { buildApp } from '../../src/server/app.js';
import { DEFAULT_LIMITS } from '../../src/server/context.js';
import { Metrics } from '../../src/server/metrics.js';
import { openService } from '../../src/service/index.js';
import { buildGroupedIndex } from '../helpers/corpus.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-scopes-'));
const DEMO = new URL('../../examples/demo-corpus.jsonl', import.meta.url);
const lines = readFileSync(DEMO, 'utf8')
  .split('\n')
  .filter((l) => l !== '')
  .slice(0, 260);
const rows = lines.map((l, i) => {
  const r = JSON.parse(l) as { text: string; ref: string; version: string };
  const [chapter, verse] = (r.ref.split(' ')[1] as string).split(':').map(Number) as [number, number];
  const day = new Date(Date.UTC(2024, 0, 1) + (chapter * 40 + verse) * 86_400_000).toISOString().slice(0, 10);
  return { text: r.text, chapter: `c${chapter}`, version: r.version, date: day, n: i };
});
const index = await buildGroupedIndex(dir, rows, ['chapter', 'date:date']);
const service = await openService({ index, reranker: false });
const jobs = service.openJobs({ dir: join(dir, 'jobs') });
t.teardown(async () => {
  await jobs.manager.close();
  await service.close();
  rmSync(dir, { recursive: true, force: true });
});

const n = service.index.ntotal;
const records = [...service.store.range(0, n)].map((r) => r.record);
const meta = (id: number) => records[id]?.meta as { chapter: string; version: string; date: string };
const vectors = await (async () => {
  const v = (await VectorFile.open(index)) as VectorFile;
  const rows = await v.read(0, n);
  await v.close();
  return rows;
})();
const dim = service.index.dim;
const cos = (a: number, b: number) => {
  let s = 0;
  for (let i = 0; i < dim; i++) s += (vectors[a * dim + i] as number) * (vectors[b * dim + i] as number);
  return s;
};
/** A global ranking (every sentence, exact), filtered afterwards by `admit`, top k: what a scope must give. */
function expected(k: number, admit: (a: number, b: number) => boolean): Set<string> {
  const out = new Set<string>();
  for (let q = 0; q < n; q++) {
    const ranked = [...Array(n).keys()].filter((d) => d !== q).sort((x, y) => cos(q, y) - cos(q, x));
    for (const d of ranked.filter((d) => admit(q, d)).slice(0, k)) out.add(pairKey(q, d));
  }
  return out;
}

async function run(spec: object): Promise<{ job: JobRecord; pairs: MinedPair[] }> {
  const created = await jobs.manager.create(spec);
  const job = await jobs.manager.wait(created.id, undefined, 20);
  t.equal(job.state, 'done', JSON.stringify(job.error ?? {}));
  return { job, pairs: [...jobs.store.pairs(job.id)].map((p) => p.pair) };
}

const keysOf = (pairs: MinedPair[]) => new Set(pairs.map((p) => pairKey(p.a.id as number, p.b.id as number)));
/** Set equality up to near-ties at the k-th place (f16 rounding decides those). */
function sameUpToTies(t: Test, got: Set<string>, want: Set<string>): void {
  const diff = [...got].filter((x) => !want.has(x)).concat([...want].filter((x) => !got.has(x)));
  t.ok(diff.length <= Math.max(2, want.size * 0.01), `${diff.length} of ${want.size} differ (near ties)`);
  t.ok(want.size > 50, `a real amount of pairs (${want.size})`);
}

t.test(
  'withinGroup: no cross-group pair, the in-group pairs of a global search filtered afterwards',
  async (t) => {
    const { pairs, job } = await run({ k: 3, withinGroup: 'chapter', batchSize: 16 });
    t.ok(
      pairs.every((p) => meta(p.a.id as number).chapter === meta(p.b.id as number).chapter),
      'never across groups',
    );
    sameUpToTies(
      t,
      keysOf(pairs),
      expected(3, (a, b) => meta(a).chapter === meta(b).chapter),
    );
    t.equal(job.total, n, 'every sentence is a query, group by group');
    // The index path (id selector) finds the same pairs as the exact path where the index supports it.
    const viaIndex = await run({ k: 3, withinGroup: 'chapter', exactMax: 0 });
    sameUpToTies(t, keysOf(viaIndex.pairs), keysOf(pairs));
  },
);

t.test('excludeSame: within a chapter, never the same translation (ParaSCI intra-paper)', async (t) => {
  const { pairs } = await run({ k: 2, withinGroup: 'chapter', excludeSame: ['version'] });
  t.ok(pairs.every((p) => meta(p.a.id as number).version !== meta(p.b.id as number).version));
  sameUpToTies(
    t,
    keysOf(pairs),
    expected(2, (a, b) => meta(a).chapter === meta(b).chapter && meta(a).version !== meta(b).version),
  );
  // The old one-key form still works, on a global search.
  const alias = await run({ k: 2, excludeSameGroup: 'version' });
  t.ok(alias.pairs.every((p) => meta(p.a.id as number).version !== meta(p.b.id as number).version));
});

t.test('window: pairs only within the days given', async (t) => {
  const days = (a: number, b: number) =>
    Math.abs(Date.parse(meta(a).date) - Date.parse(meta(b).date)) / 86_400_000;
  const { pairs } = await run({ k: 3, window: { key: 'date', days: 3 }, batchSize: 32 });
  t.ok(pairs.length > 50);
  t.ok(
    pairs.every((p) => days(p.a.id as number, p.b.id as number) <= 3),
    'every pair inside the window',
  );
  sameUpToTies(
    t,
    keysOf(pairs),
    expected(3, (a, b) => days(a, b) <= 3),
  );
});

t.test('negatives: the in-group top k that the filters reject, and only those', async (t) => {
  const filter = { charNgramMin: 0.5 };
  const all = await run({ k: 3, withinGroup: 'chapter' });
  const { pairs } = await run({ k: 3, withinGroup: 'chapter', filter, negatives: true });
  t.ok(pairs.length > 20, `negatives found (${pairs.length})`);
  t.ok(
    pairs.every((p) => p.lexical.charNgramCosine < 0.5),
    'every negative fails the filter',
  );
  t.ok(
    pairs.every((p) => meta(p.a.id as number).chapter === meta(p.b.id as number).chapter),
    'in scope',
  );
  const rejected = all.pairs.filter((p) => p.lexical.charNgramCosine < 0.5);
  sameUpToTies(t, keysOf(pairs), keysOf(rejected));
});

t.test('bad keys and malformed windows: 4xx with codes, over HTTP', async (t) => {
  const metrics = new Metrics();
  const app = buildApp({ service, limits: DEFAULT_LIMITS, metrics, jobs });
  t.teardown(() => app.close());
  const post = async (body: object) => {
    const r = await app.inject({ method: 'POST', url: '/v1/jobs', payload: body });
    return {
      status: r.statusCode,
      body: r.json() as { code: string; field?: string; message: string },
    };
  };
  const cases: Array<[object, number, string, string]> = [
    [{ withinGroup: 'paper' }, 400, 'BAD_INPUT', 'withinGroup'],
    [{ window: { key: 'chapter', days: 7 } }, 400, 'BAD_INPUT', 'window.key'],
    [{ window: { key: 'date' } }, 400, 'BAD_INPUT', 'window.days'],
    [{ window: { key: 'date', days: 7, width: 3 } }, 400, 'BAD_INPUT', 'window.days'],
    [{ window: { key: 'date', days: -1 } }, 400, 'BAD_INPUT', 'window.days'],
    [{ window: { days: 7 } }, 400, 'BAD_INPUT', 'window.key'],
    [{ excludeSame: [] }, 400, 'BAD_INPUT', 'excludeSame'],
    [{ negatives: true }, 400, 'BAD_INPUT', 'negatives'],
    [{ filter: { probabilityMin: { paraphrase: 0.5 } } }, 400, 'BAD_INPUT', 'filter'],
  ];
  for (const [body, status, code, field] of cases) {
    const r = await post(body);
    t.equal(r.status, status, JSON.stringify(body));
    t.equal(r.body.code, code, JSON.stringify(body));
    t.equal(r.body.field, field, `${JSON.stringify(body)}: ${r.body.message}`);
  }
});

t.test('sub-sentence pairs: the best clause run of the longer sentence, with its offsets', async (t) => {
  const sdir = join(dir, 'sub');
  const texts = [
    'The committee approved the new budget on Monday.',
    'Despite heavy rain in the morning, on Monday the committee approved the new budget, and the mayor left for Paris.',
    'Neural networks learn representations from data.',
    'Our results, which we report in Table 3, show that neural networks learn representations from data; we discuss this below.',
    'The cat sat quietly on the warm windowsill.',
    'Stock prices fell sharply after the announcement.',
  ];
  writeFileSync(join(dir, 'sub.txt'), `${texts.join('\n')}\n`);
  await buildIndex({ inputs: [join(dir, 'sub.txt')], out: sdir, model: 'all-minilm-l6-v2', quiet: true });
  const svc = await openService({ index: sdir, reranker: false });
  const sjobs = svc.openJobs({ dir: join(dir, 'sub-jobs') });
  t.teardown(async () => {
    await sjobs.manager.close();
    await svc.close();
  });
  const spec = { k: 2, filter: { plrMax: 0.5 }, subSentence: { method: 'best-clause', minCosine: 0.6 } };
  const job = await sjobs.manager.wait((await sjobs.manager.create(spec)).id, undefined, 20);
  const pairs = [...sjobs.store.pairs(job.id)].map((p) => p.pair);
  const spans = pairs.filter((p) => p.span !== undefined);
  t.ok(
    spans.length >= 2,
    `sub-sentence pairs found (${spans.length}): ${JSON.stringify(pairs.map((p) => [p.a.text.slice(0, 20), p.b.text.slice(0, 20), p.span, p.lexical.plr]))}`,
  );
  const cut = (p: MinedPair) => {
    const s = p.span as NonNullable<MinedPair['span']>;
    return (s.side === 'a' ? p.a.text : p.b.text).slice(s.start, s.end);
  };
  const got = new Set(spans.map(cut));
  t.ok(got.has('on Monday the committee approved the new budget'), [...got].join(' | '));
  t.ok(got.has('show that neural networks learn representations from data'), [...got].join(' | '));
  for (const p of spans)
    t.ok((p.span?.cosine ?? 0) >= 0.6 && (p.lexical.plr ?? 9) < 0.5, 'span passes the filters');
  // Without sub-sentence mining, the length filter keeps none of these pairs.
  const plain = await sjobs.manager.wait(
    (await sjobs.manager.create({ k: 2, filter: { plrMax: 0.5 } })).id,
    undefined,
    20,
  );
  t.equal(
    [...sjobs.store.pairs(plain.id)].filter((p) => p.pair.b.text.length > 80 || p.pair.a.text.length > 80)
      .length,
    0,
  );
});

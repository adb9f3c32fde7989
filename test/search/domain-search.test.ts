/**
 * Domains in search and jobs on a small real index (all-MiniLM-L6-v2, real FAISS and LMDB): subsample
 * keeps only sentences under the threshold, weighted and combined order pairs as their formulas say,
 * σ survives a restart of the service, an unknown domain is a 404; the BERTScore filter on pairs one can
 * check by hand.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { fitDomain } from '../../src/cli/domain-command.js';
import {
  addDomain,
  Column,
  carryDomains,
  domainsToCarry,
  indexIdentity,
  putDomain,
  readDomains,
} from '../../src/domain/index.js';
import { bertScore, Encoder } from '../../src/encode/index.js';
import { readManifest } from '../../src/index/index.js';
import { buildIndex } from '../../src/indexer/build.js';
import { rebuildIndex } from '../../src/indexer/rebuild.js';
import type { SearchOptionsInput } from '../../src/search/types.js';
import { searchOptionsSchema } from '../../src/search/types.js';
import { buildApp } from '../../src/server/app.js';
import { DEFAULT_LIMITS } from '../../src/server/context.js';
import { Metrics } from '../../src/server/metrics.js';
import { openService, type Service } from '../../src/service/index.js';
import { mixedCorpus, scienceSentence } from '../helpers/domain-corpus.js';
import { validateResponse } from '../helpers/openapi.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-domain-search-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const corpus = mixedCorpus(240);
writeFileSync(join(dir, 'corpus.txt'), `${corpus.map((c) => c.text).join('\n')}\n`);
const index = join(dir, 'index');
await buildIndex({ inputs: [join(dir, 'corpus.txt')], out: index, model: 'all-minilm-l6-v2', quiet: true });
const inDomain = join(dir, 'science.txt');
writeFileSync(inDomain, `${Array.from({ length: 200 }, (_, i) => scienceSentence(i * 11 + 3)).join('\n')}\n`);
await addDomain({ index, name: 'sci', inDomain: [inDomain], order: 3 });

let service: Service = await openService({ index, reranker: false });
t.teardown(() => service.close());
const queries = [
  corpus[0]!.text,
  corpus[1]!.text,
  scienceSentence(7),
  'The quiet doctor visited the market.',
];
const search = (o: SearchOptionsInput) => service.core.search(queries, searchOptionsSchema.parse(o));

t.test('subsample: only sentences under the threshold, on the sides asked for', async (t) => {
  const both = await search({ k: 20, rerank: false, domain: { name: 'sci' } });
  let seen = 0;
  for (const r of both.results) {
    t.ok(r.domain, 'the query carries its σ');
    if (!r.domain?.kept) t.equal(r.candidates.length, 0, 'a dropped query has no candidates');
    for (const c of r.candidates) {
      seen++;
      t.ok(c.domain && c.domain.sigma < 0 && c.domain.querySigma < 0, `σ ${c.domain?.sigma} < 0`);
    }
  }
  t.ok(seen > 0, `${seen} candidates kept`);
  t.equal(both.results[1]?.domain?.kept, false, 'an everyday query is dropped');
  const cand = await search({
    k: 20,
    rerank: false,
    domain: { name: 'sci', apply: 'candidates', threshold: 1 },
  });
  t.equal(cand.results[1]!.domain!.kept, true, 'apply: candidates keeps an everyday query');
  t.ok(cand.results[1]!.domain!.sigma > 1);
  t.ok(cand.results[0]!.candidates.length > 0);
  for (const c of cand.results.flatMap((r) => r.candidates)) t.ok(c.domain!.sigma < 1);
  const top = await search({
    k: 50,
    rerank: false,
    domain: { name: 'sci', topFraction: 0.1, apply: 'candidates' },
  });
  const kept = top.results.flatMap((r) => r.candidates);
  const entry = (await readDomains(index)).sci!;
  t.ok(kept.length > 0 && kept.every((c) => c.domain!.sigma < entry.quantileTable[101]! + 1e-6));
});

t.test('weighted: ordered by cosine × √(w_query · w_candidate)', async (t) => {
  const r = await search({
    k: 15,
    rerank: false,
    domain: { name: 'sci', mode: 'weighted', apply: 'queries', threshold: 100 },
  });
  for (const row of r.results) {
    const scores = row.candidates.map((c) => c.domain!.score!);
    row.candidates.forEach((c) => {
      const d = c.domain!;
      t.ok(Math.abs(d.score! - c.cosine * Math.sqrt(d.weight * d.queryWeight)) < 1e-6);
    });
    t.same(
      scores,
      [...scores].sort((a, b) => b - a),
      'rows sorted by the weighted score',
    );
  }
});

t.test('combined: fit on labeled pairs, then the order its weights say', async (t) => {
  const pairs = join(dir, 'pairs.tsv');
  const rows = ['s1\ts2\tlabel'];
  for (let i = 0; i < 30; i++) rows.push(`${scienceSentence(i * 5)}\t${scienceSentence(i * 5 + 4)}\t1`);
  for (let i = 0; i < 30; i++) rows.push(`${corpus[3 * i + 1]!.text}\t${corpus[3 * i + 2]!.text}\t0`);
  writeFileSync(pairs, `${rows.join('\n')}\n`);
  const model = await fitDomain({ index, name: 'sci', pairs, model: 'all-minilm-l6-v2' });
  t.same(model.features, ['cosine', 'sigmaMin', 'sigmaMax']);
  t.equal(model.pairs.positives, 30);
  t.ok(model.weights[2]! < 0, 'a higher σ (less in-domain) lowers the score');
  const onlyPositives = join(dir, 'positives.tsv');
  writeFileSync(onlyPositives, `${rows.slice(0, 31).join('\n')}\n`);
  await t.rejects(fitDomain({ index, name: 'sci', pairs: onlyPositives, model: 'all-minilm-l6-v2' }), {
    code: 'BAD_INPUT',
  });
  // Weights chosen by hand: only the higher σ counts, so rows come out by that σ, lowest first.
  const entry = (await readDomains(index)).sci!;
  await putDomain(index, {
    ...entry,
    combined: { ...model, features: ['sigmaMax'], mean: [0], std: [1], weights: [-2], intercept: 0 },
  });
  const r = await search({
    k: 15,
    rerank: false,
    domain: { name: 'sci', mode: 'combined', apply: 'queries', threshold: 100 },
  });
  for (const row of r.results) {
    const hi = row.candidates.map((c) => Math.max(c.domain!.sigma, c.domain!.querySigma));
    t.same(
      hi,
      [...hi].sort((a, b) => a - b),
      'ascending by max σ, whatever the cosine',
    );
    for (const c of row.candidates) {
      t.ok(
        Math.abs(c.domain!.score! - 1 / (1 + Math.exp(2 * Math.max(c.domain!.sigma, c.domain!.querySigma)))) <
          1e-6,
      );
    }
  }
  await putDomain(index, { ...entry, combined: model });
});

t.test('a job in each mode carries both sides σ', async (t) => {
  const { manager, store } = service.openJobs({ dir: join(dir, 'jobs') });
  for (const mode of ['subsample', 'weighted', 'combined'] as const) {
    const job = await manager.create({ k: 5, domain: { name: 'sci', mode } });
    const done = await manager.wait(job.id, undefined, 50);
    t.equal(done.state, 'done', mode);
    const pairs = [...store.pairs(job.id)].map((p) => p.pair);
    t.ok(pairs.length > 0, `${mode}: ${pairs.length} pairs`);
    for (const p of pairs) {
      t.ok(p.domain && Number.isFinite(p.domain.a.sigma) && Number.isFinite(p.domain.b.sigma));
      if (mode === 'subsample') t.ok(p.domain!.a.sigma < 0 && p.domain!.b.sigma < 0, 'both sides under 0');
      if (mode === 'weighted') {
        const d = p.domain!;
        t.ok(Math.abs(d.score! - p.cosine * Math.sqrt(d.a.weight * d.b.weight)) < 1e-6);
      }
      if (mode === 'combined') t.ok(p.domain!.score! > 0 && p.domain!.score! < 1);
    }
  }
  // An unknown domain is refused when the job is created, not accepted and failed later.
  const before = manager.list().length;
  await t.rejects(manager.create({ k: 5, domain: { name: 'nope' } }), { code: 'NOT_FOUND' });
  t.equal(manager.list().length, before, 'no job recorded');
});

t.test('σ survives a restart; an unknown domain is a 404 over HTTP', async (t) => {
  const before = await search({
    k: 5,
    rerank: false,
    domain: { name: 'sci', apply: 'candidates', threshold: 100 },
  });
  await service.close();
  service = await openService({ index, reranker: false });
  const after = await search({
    k: 5,
    rerank: false,
    domain: { name: 'sci', apply: 'candidates', threshold: 100 },
  });
  t.same(
    after.results.map((r) => r.candidates.map((c) => [c.id, c.domain?.sigma])),
    before.results.map((r) => r.candidates.map((c) => [c.id, c.domain?.sigma])),
  );
  const app = buildApp({ service, limits: DEFAULT_LIMITS, metrics: new Metrics() });
  t.teardown(() => app.close());
  const res = await app.inject({
    method: 'POST',
    url: '/v1/search',
    payload: { text: 'a test', domain: { name: 'nope' } },
  });
  t.equal(res.statusCode, 404);
  t.equal(res.json().code, 'NOT_FOUND');
  // The documented shapes: candidates with both sides' σ, the domain list.
  const ok = await app.inject({
    method: 'POST',
    url: '/v1/search',
    payload: {
      text: scienceSentence(9),
      rerank: false,
      filter: { bertScoreMin: 0 },
      domain: { name: 'sci', mode: 'weighted' },
    },
  });
  t.equal(ok.statusCode, 200);
  t.ok(ok.json().results[0].candidates.length > 0);
  validateResponse('POST', '/v1/search', 200, ok.headers['content-type'] as string, ok.body);
  const list = await app.inject({ method: 'GET', url: '/v1/domains' });
  validateResponse('GET', '/v1/domains', 200, list.headers['content-type'] as string, list.body);
  t.same(
    list.json().domains.map((d: { name: string }) => d.name),
    ['sci'],
  );
  const bad = await app.inject({
    method: 'POST',
    url: '/v1/search',
    payload: { text: 'a test', domain: { name: 'sci', threshold: 0, topFraction: 0.1 } },
  });
  t.equal(bad.statusCode, 400);
});

t.test('BERTScore on pairs one can check by hand, and as a search filter', async (t) => {
  const enc = await Encoder.open('models/all-minilm-l6-v2');
  t.teardown(() => enc.close());
  const s = [
    'The cat sat on the mat.',
    'The cat sat on the mat.',
    'A cat was sitting on the mat.',
    'Stock prices fell sharply on Monday.',
  ];
  const tv = await enc.encodeTokens(s);
  t.equal(tv.offsets[1], 7, 'seven word pieces, [CLS] and [SEP] left out');
  const same = bertScore(tv, 0, 1);
  t.ok(Math.abs(same.f1 - 1) < 1e-5 && Math.abs(same.precision - 1) < 1e-5, 'identical sentences: 1');
  const para = bertScore(tv, 0, 2).f1;
  const other = bertScore(tv, 0, 3).f1;
  t.ok(Math.abs(bertScore(tv, 2, 0).f1 - para) < 1e-9, 'F1 is symmetric');
  t.ok(para > other + 0.1, `paraphrase ${para.toFixed(3)} > unrelated ${other.toFixed(3)}`);
  const r = await search({ k: 20, rerank: false, filter: { bertScoreMin: 0.75 } });
  const all = r.results.flatMap((x) => x.candidates);
  t.ok(all.length > 0 && all.every((c) => c.bertScore! > 0.75), `${all.length} candidates above 0.75`);
  const loose = await search({ k: 20, rerank: false });
  t.ok(loose.results.flatMap((x) => x.candidates).length > all.length, 'the filter drops some');
  const idf = await search({ k: 5, rerank: false, filter: { bertScoreMin: 0, bertScoreIdf: true } });
  t.ok(idf.results[0]!.candidates.every((c) => Number.isFinite(c.bertScore)));
});

t.test(
  'sentences added while serving carry σ from the domain scorer: subsample keeps or drops them',
  async (t) => {
    const sci =
      'We propose a quantum-inspired tagger for morphological analysis and evaluate it on Finnish news.';
    const everyday = 'My neighbour painted her garden fence bright yellow over the long weekend.';
    const [a, b] = await service.writes.add([{ text: sci }, { text: everyday }]);
    t.ok(a && b && a.id >= corpus.length && b.id === a.id + 1, 'two new ids');
    const scorer = await (await service.domains.get('sci')).scorer();
    const want = scorer.score([sci, everyday]);
    t.ok((want.sigma[0] as number) < 0 && (want.sigma[1] as number) > 0, 'one in the domain, one not');
    const find = async (text: string, domain: NonNullable<SearchOptionsInput['domain']>) =>
      (await service.core.search([text], searchOptionsSchema.parse({ k: 10, rerank: false, domain })))
        .results[0]?.candidates ?? [];
    const kept = (await find(sci.replace('Finnish news', 'Finnish newspapers'), { name: 'sci' })).find(
      (c) => c.id === a?.id,
    );
    t.ok(kept, 'the in-domain added sentence is kept');
    t.ok(
      Math.abs((kept?.domain?.sigma ?? Number.NaN) - (want.sigma[0] as number)) < 1e-5,
      'its σ is the scorer’s',
    );
    const near = everyday.replace('bright yellow', 'a bright yellow');
    t.notOk(
      (await find(near, { name: 'sci', apply: 'candidates' })).some((c) => c.id === b?.id),
      'the other dropped',
    );
    const all = await find(near, { name: 'sci', apply: 'candidates', threshold: 100 });
    const found = all.find((c) => c.id === b?.id);
    t.ok(found, 'found when the threshold keeps everything');
    t.ok(Math.abs((found?.domain?.sigma ?? Number.NaN) - (want.sigma[1] as number)) < 1e-5);
  },
);

t.test('index --rebuild carries the domain over: columns extended, deleted rows NaN, same σ', async (t) => {
  const entryBefore = (await readDomains(index)).sci!;
  const sci =
    'We propose a quantum-inspired tagger for morphological analysis and evaluate it on Finnish news.';
  const query = sci.replace('Finnish news', 'Finnish newspapers');
  const sigmaOf = async () =>
    (
      await service.core.search(
        [query],
        searchOptionsSchema.parse({ k: 10, rerank: false, domain: { name: 'sci' } }),
      )
    ).results[0]?.candidates.find((c) => c.text === sci)?.domain?.sigma;
  const before = await sigmaOf();
  t.ok(before !== undefined && before < 0, 'the added sentence is kept before the rebuild');
  const gone = corpus.findIndex((c) => c.science);
  const kept = (await service.domains.get('sci')).score(gone + 1).sigma;
  await service.writes.delete([gone]);
  await service.close();
  const r = await rebuildIndex(index, () => {}, { pending: domainsToCarry, run: carryDomains });
  t.same(r.carried, ['sci']);
  const manifest = await readManifest(index);
  const entry = (await readDomains(index)).sci!;
  t.equal(entry.index, indexIdentity(manifest), 'the entry moved to the rebuilt index');
  t.equal(entry.count, manifest.ntotal);
  t.ok(entry.count > entryBefore.count);
  const column = await Column.open(join(index, 'domains', 'sci', 'sigma.f32'), entry.count);
  t.ok(Number.isNaN(column.get(gone)), 'a deleted sentence is NaN');
  t.equal(column.get(gone + 1), kept, 'a built sentence keeps its σ');
  t.ok(Number.isFinite(entry.quantiles.mean), 'the distribution leaves NaN out');
  t.equal(await domainsToCarry(index, manifest), false, 'nothing left to carry');
  service = await openService({ index, reranker: false });
  const after = await sigmaOf();
  t.ok(after !== undefined && Math.abs(after - (before as number)) < 1e-5, `σ ${after} read from the column`);
});

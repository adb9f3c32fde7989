/**
 * Sealing while serving (issue #30), a real service (all-MiniLM-L6-v2, an IVF-PQ index re-scored from
 * vectors.f16, LMDB): sentences added over HTTP reach --seal-at, are sealed in the background into a
 * segment of the build's kind, and stay searchable before, during and after it; a sentence deleted after
 * its seal stays gone; GET /v1/index reports the segments and the quantizers' fit; after a restart the
 * sealed segment is read back (the growing one holds only what was not sealed). `index --rebuild` then folds
 * the writes into a retrained index with the same ids.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { readManifest, VectorFile } from '../../src/index/index.js';
import { rebuildIndex } from '../../src/indexer/rebuild.js';
import { runTune } from '../../src/indexer/tune.js';
import { buildApp } from '../../src/server/app.js';
import { DEFAULT_LIMITS } from '../../src/server/context.js';
import { Metrics } from '../../src/server/metrics.js';
import { openService, type Service } from '../../src/service/index.js';
import { NEWS as NEW, NEWS_PARAPHRASE as QUERY, syntheticSentence } from '../helpers/corpus.js';
import { startTestService } from '../helpers/service.js';

const KEY = 'writer-key-123456';
const SEAL_AT = 600;
const ts = await startTestService(
  800,
  false,
  // The writes embed in an encoder session of their own (serve --write-threads).
  { seal: { sealAt: SEAL_AT }, writeThreads: 1 },
  { factory: 'IVF16,PQ16np', refine: 'vectors' },
);
t.teardown(() => rmSync(ts.dir, { recursive: true, force: true }));

const auth = { authorization: `Bearer ${KEY}` };
const appOf = (service: Service) =>
  buildApp(
    { service, limits: DEFAULT_LIMITS, metrics: new Metrics() },
    { auth: { keys: [{ name: 'writer', key: KEY }], protectAll: false } },
  );

/** What the first test leaves for the rebuild. */
let state = { base: 0, lateId: 0, texts: [] as string[] };

async function top(app: ReturnType<typeof appOf>, text: string, k = 10) {
  const res = await app.inject({ method: 'POST', url: '/v1/search', payload: { text, k, rerank: false } });
  return res.json().results[0].candidates as Array<{ id: number; cosine: number }>;
}

t.test(
  'added sentences are sealed in the background and stay searchable, also after a restart',
  async (t) => {
    let service = ts.service;
    let app = appOf(service);
    t.equal(service.index.manifest.factory, 'IVF16,PQ16np');
    const base = service.store.count;
    const texts = Array.from({ length: 1000 }, (_, i) => syntheticSentence(i));
    texts[100] = NEW;
    for (let i = 0; i < texts.length; i += 200) {
      const sentences = texts.slice(i, i + 200).map((text) => ({ text }));
      const res = await app.inject({
        method: 'POST',
        url: '/v1/sentences',
        headers: auth,
        payload: { sentences },
      });
      t.equal(res.statusCode, 200, res.body.slice(0, 200));
      // Found at every point: growing, being sealed, sealed.
      t.ok(
        (await top(app, QUERY)).some((c) => c.id === base + 100),
        `found after the write at ${i}`,
      );
    }
    await service.writes.seal(); // waits for the background seal, then seals the rest
    const updates = (await app.inject({ method: 'GET', url: '/v1/index' })).json().updates;
    t.match(updates, { added: 1000, growing: 0, sealed: { sentences: 1000 } });
    t.ok(updates.sealed.segments >= 2, 'one seal in the background at --seal-at, one for the rest');
    t.ok(updates.drift !== null && typeof updates.drift.retrain === 'boolean', 'drift measured');
    t.comment(`drift: ${updates.drift?.reason}`);

    // (A search leaves out the query's own text: ask with one word more.)
    const hit = (await top(app, NEW.replace('.', ' today.')))[0];
    t.equal(hit?.id, base + 100, 'a sealed sentence is the nearest neighbour of its near copy');
    t.ok((hit?.cosine ?? 0) > 0.9, `with its exact cosine (${hit?.cosine})`);
    t.ok(
      (await top(app, QUERY)).some((c) => c.id === base + 100),
      'the paraphrase is in the top 10, sealed',
    );

    const del = await app.inject({ method: 'DELETE', url: `/v1/sentences/${base + 100}`, headers: auth });
    t.same(del.json(), { id: base + 100, deleted: true });
    t.notOk(
      (await top(app, QUERY, 50)).some((c) => c.id === base + 100),
      'deleted after its seal: gone',
    );

    // Added after the seals: in the growing segment beside the sealed ones.
    const late = await app.inject({
      method: 'POST',
      url: '/v1/sentences',
      headers: auth,
      payload: { sentences: [{ text: 'A late headline about the harbour bridge reopening.' }] },
    });
    const lateId = late.json().sentences[0].id as number;
    state = { base, lateId, texts };

    await app.close();
    await service.close();
    service = await openService({ index: ts.index, reranker: false, seal: { sealAt: SEAL_AT } });
    app = appOf(service);
    t.teardown(async () => {
      await app.close();
      await service.close();
    });
    t.match((await app.inject({ method: 'GET', url: '/v1/index' })).json().updates, {
      added: 1001,
      deleted: 1,
      growing: 1,
      sealed: { sentences: 1000 },
    });
    t.notOk(
      (await top(app, QUERY, 50)).some((c) => c.id === base + 100),
      'still gone after the restart',
    );
    t.equal(
      (await top(app, (texts[777] as string).replace('.', ' today.')))[0]?.id,
      base + 777,
      'a sealed sentence is found after the restart',
    );
    t.equal((await top(app, 'A late headline about the harbour bridge reopening today.'))[0]?.id, lateId);
  },
);

t.test(
  'index --rebuild folds the writes in: retrained, same ids, deletes applied for good, segments gone',
  async (t) => {
    const { base, lateId, texts } = state;
    t.ok(lateId > base, 'the first test ran');
    // `paramine tune` measures the index as searches see it: shards, sealed segments, growing one.
    const lines: string[] = [];
    const tuned = await runTune({ index: ts.index, quiet: true, queries: 300 }, (l) => lines.push(l));
    t.match(
      lines[0],
      new RegExp(
        `^tuning the live index: ${base} built \\+ 1001 added sentences \\(1000 in \\d+ sealed segments, 1 growing\\), 1 deleted`,
      ),
    );
    t.ok(tuned.chosen.recall >= 0.9, `recall@10 ${tuned.chosen.recall} over the live index`);
    const before = await readManifest(ts.index);
    const r = await rebuildIndex(ts.index);
    t.match(r, { ntotal: lateId + 1, folded: 1001, deleted: 1, factory: 'IVF16,PQ16np', resumed: false });
    const after = await readManifest(ts.index);
    t.equal(after.ntotal, lateId + 1);
    t.not(after.createdAt, before.createdAt, 'a new build of the index');
    t.ok((after.operatingPoints ?? []).length > 0, 'tuned as at the end of a build');
    t.notOk(
      readdirSync(join(ts.index, 'updates')).some((f) => f.startsWith('seg-')),
      'the sealed segments were folded in and their files removed',
    );
    const service = await openService({ index: ts.index, reranker: false, seal: { sealAt: SEAL_AT } });
    const app = appOf(service);
    t.teardown(async () => {
      await app.close();
      await service.close();
    });
    t.equal(service.store.count, lateId + 1, 'the store holds the added sentences');
    t.match((await app.inject({ method: 'GET', url: '/v1/index' })).json().updates, {
      added: 0,
      deleted: 1,
      growing: 0,
      sealed: { segments: 0, sentences: 0 },
    });
    t.notOk(
      (await top(app, QUERY, 50)).some((c) => c.id === base + 100),
      'a deleted sentence stays gone',
    );
    // Deletes applied for good: in no shard, its vector zeroed, its text erased; the id stays taken.
    t.match(after, { removed: 1, shards: [{ count: lateId }] });
    t.same([...service.store.range(base + 100, base + 101)], [{ id: base + 100, record: { text: '' } }]);
    const vectors = await VectorFile.open(ts.index);
    t.ok(vectors);
    t.same(
      [...((await vectors?.readIds([base + 100])) ?? [])],
      new Array(384).fill(0),
      'its vector is zeros',
    );
    t.ok(
      [...((await vectors?.readIds([base + 101])) ?? [])].some((x) => x !== 0),
      'a kept one is not',
    );
    await vectors?.close();
    const again = await app.inject({
      method: 'POST',
      url: '/v1/sentences',
      headers: auth,
      payload: { sentences: [{ text: NEW }] },
    });
    t.equal(again.statusCode, 200, 'its text can be added again (dedup key freed)');
    const againId = again.json().sentences[0].id as number;
    t.equal(againId, lateId + 1, 'under a new id');
    t.equal((await top(app, QUERY))[0]?.id, againId);
    t.equal((await top(app, (texts[777] as string).replace('.', ' today.')))[0]?.id, base + 777, 'same ids');
    t.equal((await top(app, 'A late headline about the harbour bridge reopening today.'))[0]?.id, lateId);
    const more = await app.inject({
      method: 'POST',
      url: '/v1/sentences',
      headers: auth,
      payload: { sentences: [{ text: 'After the rebuild, a new ferry timetable was published.' }] },
    });
    t.equal(more.json().sentences[0].id, lateId + 2, 'ids go on after the rebuild');
    t.equal(
      (await top(app, 'After the rebuild, a new ferry timetable was published today.'))[0]?.id,
      lateId + 2,
    );
  },
);

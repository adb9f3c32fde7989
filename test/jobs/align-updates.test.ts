/**
 * `docs align` honours the index's writes, from the CLI and inside a job, by every method: a document whose
 * sentences were all deleted is gone, a document made of added sentences pairs with its twin, and the pairs
 * of the rest stay.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildIndex } from '../../src/indexer/build.js';
import { alignIndexDir } from '../../src/jobs/align-index.js';
import { openService } from '../../src/service/index.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-align-updates-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const MODEL = 'test/fixtures/tiny-encoder';

const harbour = [
  'The storm closed the harbour for three days. Fishing boats stayed tied to the pier.',
  'A storm kept the harbour shut for three days, and the fishing boats stayed at the pier.',
];
const orchestra = [
  'The orchestra played a new symphony on Friday night. The audience stood and applauded.',
  'On Friday night the orchestra premiered a symphony. The audience gave it a standing ovation.',
];
const bridge = [
  'Engineers reopened the old bridge after a year of repairs. Traffic returned on Monday.',
  'After a year of repairs the old bridge is open again, engineers said. Cars crossed it on Monday.',
];

const cli = (...args: string[]) =>
  execFileSync(process.execPath, ['dist/cli.js', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
const key = (p: { a: string; b: string }) => [p.a, p.b].sort().join('~');

t.test('deleted documents leave, added ones pair, by every method, from the CLI and in a job', async (t) => {
  // d:1 ~ d:2 (harbour), d:3 ~ d:4 (orchestra), d:5 alone (its twin comes later, added)
  const corpus = join(dir, 'd.txt');
  writeFileSync(corpus, [...harbour, ...orchestra, bridge[0]].join('\n\n'));
  const index = join(dir, 'index');
  await buildIndex(
    { inputs: [corpus], out: index, model: MODEL, documents: true, quiet: true, vectors: 'f16' },
    () => {},
  );
  const before = await alignIndexDir(index, { partners: 1, min: 0.05 });
  t.same(before.pairs.map(key).sort(), ['d:1~d:2', 'd:3~d:4'], 'as built');

  // delete every sentence of d:2; add d:6, the bridge's twin, as sentences with their document's key
  cli('delete', '--index', index, '--model', MODEL, '--where', 'doc=d:2');
  const added = join(dir, 'added.jsonl');
  const twin = (bridge[1] as string).split('. ').map((s, i, all) => (i < all.length - 1 ? `${s}.` : s));
  writeFileSync(added, twin.map((text, i) => JSON.stringify({ text, doc: 'd:6', position: i })).join('\n'));
  cli('add', '--index', index, '--model', MODEL, '--input', added);

  for (const method of ['tfidf', 'mean', 'hybrid'] as const) {
    const means: string[] = [];
    const after = await alignIndexDir(
      index,
      { method, partners: 1, min: 0.05 },
      { onProgress: (stage, done, total) => stage === 'means' && means.push(`${done}/${total}`) },
    );
    // Reading the embeddings (built and added ones) is a stage of its own, as the n-grams are.
    t.same(means, method === 'tfidf' ? [] : ['5/5'], `${method}: the means stage's progress`);
    const keys = after.pairs.map(key).sort();
    t.notOk(
      keys.some((k) => k.includes('d:2')),
      `${method}: the deleted document is in no pair`,
    );
    t.ok(keys.includes('d:5~d:6'), `${method}: the added document pairs with its twin (${keys.join(', ')})`);
    t.ok(keys.includes('d:3~d:4'), `${method}: the untouched pair stays`);
  }

  // The job's own first stage sees the same: the service reads the same writes.
  const service = await openService({ index, model: MODEL, reranker: false });
  t.teardown(() => service.close());
  const { manager, store } = service.openJobs({ dir: join(dir, 'jobs'), dataDir: dir });
  // The alignment is the job's first stage: its progress goes into the record while it runs.
  const stages: string[] = [];
  const put = store.put.bind(store);
  store.put = (record) => {
    if (record.stage !== undefined)
      stages.push(`${record.state} ${record.stage.name} ${record.stage.done}/${record.stage.total}`);
    return put(record);
  };
  for (const method of ['tfidf', 'mean', 'hybrid'] as const) {
    const job = await manager.create({
      k: 5,
      minCosine: -1,
      docPairs: { align: { method, partners: 1, min: 0.05 } },
    });
    const done = await manager.wait(job.id);
    t.equal(done.state, 'done', JSON.stringify(done.error ?? {}));
    t.ok(
      stages.some((x) => /^running align: search (\d+)\/\1$/.test(x)),
      `${method} job: the alignment's progress was in the record (${stages.join('; ')})`,
    );
    t.equal(done.stage, undefined, `${method} job: no stage once mining ran`);
    stages.length = 0;
    const docs = [...store.pairs(job.id, 0, 1000)].map((r) =>
      key({ a: String(r.pair.a.meta?.doc), b: String(r.pair.b.meta?.doc) }),
    );
    t.ok(docs.includes('d:5~d:6'), `${method} job: pairs mined between the built and the added document`);
    t.notOk(
      docs.some((k) => k.includes('d:2')),
      `${method} job: none from the deleted document`,
    );
  }
});

t.test('an index not built from documents: the error says how to get documents', async (t) => {
  const corpus = join(dir, 'flat.txt');
  writeFileSync(corpus, 'One sentence here.\nAnother sentence there.\nA third one.\n');
  const index = join(dir, 'flat');
  await buildIndex({ inputs: [corpus], out: index, model: MODEL, quiet: true }, () => {});
  await t.rejects(alignIndexDir(index, {}), {
    code: 'BAD_INPUT',
    field: 'docKey',
    message: /paramine index --documents.*--doc-key KEY/,
  });
  cli('groups', 'build', '--index', index, '--key', 'doc');
  await t.rejects(alignIndexDir(index, {}), {
    code: 'BAD_INPUT',
    message: /no sentence of the index has a "doc" value: build the index from documents/,
  });
});

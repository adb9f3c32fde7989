/**
 * Documents in: sentence splitting (offsets, abbreviations, wrapped lines, paragraphs; English and Finnish),
 * the three document formats (.txt blank-line separated, .jsonl, .srt), resuming by sentence, and a sentence's
 * context through a real index and the HTTP route.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { readDocuments } from '../../src/corpus/documents.js';
import { type CorpusRecord, readSentences } from '../../src/corpus/index.js';
import { splitSentences } from '../../src/corpus/split.js';
import { buildIndex } from '../../src/indexer/build.js';
import { exportDataset } from '../../src/jobs/export.js';
import { buildApp } from '../../src/server/app.js';
import { DEFAULT_LIMITS } from '../../src/server/context.js';
import { Metrics } from '../../src/server/metrics.js';
import { openService } from '../../src/service/index.js';
import { ContextReader } from '../../src/store/index.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-docs-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('splitting keeps offsets and does not break after abbreviations or initials', async (t) => {
  const text =
    'Dr. Smith arrived at 3.30 p.m. on Jan. 5. He said "Hello!" Then he left.\n' +
    'Mr. Jones, however,\r\ndisagreed. J. R. R. Tolkien wrote it.\n\n  A paragraph without a period\n\nThe end?';
  const got = splitSentences(text);
  t.same(
    got.map((s) => s.text),
    [
      'Dr. Smith arrived at 3.30 p.m. on Jan. 5.',
      'He said "Hello!"',
      'Then he left.',
      'Mr. Jones, however, disagreed.',
      'J. R. R. Tolkien wrote it.',
      'A paragraph without a period',
      'The end?',
    ],
  );
  for (const s of got)
    t.equal(text.slice(s.start, s.end).replace(/\s+/g, ' '), s.text, `offsets of "${s.text}"`);
  t.same(
    splitSentences('Prof. Virtanen ym. kirjoittivat esim. näin. Se on totta. Klo 12 alkaa kokous.', 'fi').map(
      (s) => s.text,
    ),
    ['Prof. Virtanen ym. kirjoittivat esim. näin.', 'Se on totta.', 'Klo 12 alkaa kokous.'],
  );
  t.same(splitSentences(' \n\n '), [], 'nothing from whitespace');
});

const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

t.test('the document formats: sentences with their document, position and offsets', async (t) => {
  const txt = join(dir, 'news.txt');
  writeFileSync(txt, 'First story. It has two sentences.\n\nSecond story.\nWrapped across\nlines.\n');
  const recs = (await collect(readDocuments(txt, 0, 'txt'))) as CorpusRecord[];
  t.same(
    recs.map((r) => [r.record, r.text, r.meta?.doc, r.meta?.pos]),
    [
      [1, 'First story.', 'news:1', 0],
      [2, 'It has two sentences.', 'news:1', 1],
      [3, 'Second story.', 'news:2', 0],
      [4, 'Wrapped across lines.', 'news:2', 1],
    ],
  );
  t.match(recs[1]?.meta, { start: 13, end: 34 });

  const jsonl = join(dir, 'docs.jsonl');
  writeFileSync(
    jsonl,
    `${JSON.stringify({ doc: 'a-1', text: 'Hei. Mitä kuuluu?', lang: 'fi', source: 'x' })}\n{bad\n${JSON.stringify({ id: 7, text: 'One more.' })}\n`,
  );
  await t.rejects(collect(readDocuments(jsonl, 0, 'jsonl')), { code: 'BAD_FILE' });
  const j = (await collect(readDocuments(jsonl, 2, 'jsonl', { onBadRecord: 'skip' }))) as CorpusRecord[];
  t.same(
    j.map((r) => [r.fileIndex, r.record, 'error' in r ? 'bad' : r.text, r.meta?.doc, r.meta?.source]),
    [
      [2, 1, 'Hei.', 'a-1', 'x'],
      [2, 2, 'Mitä kuuluu?', 'a-1', 'x'],
      [2, 3, 'bad', undefined, undefined],
      [2, 4, 'One more.', '7', undefined],
    ],
  );

  const srt = join(dir, 'movie.srt');
  writeFileSync(
    srt,
    '\uFEFF1\n00:00:01,000 --> 00:00:03,500\n<i>Where are you going?</i> Home.\n\n2\n00:00:04,000 --> 00:00:05,000\n42\n\n',
  );
  const s = (await collect(readDocuments(srt, 0, 'srt'))) as CorpusRecord[];
  t.same(
    s.map((r) => [r.text, r.meta?.doc, r.meta?.pos, r.meta?.cue, r.meta?.startMs, r.meta?.endMs]),
    [
      ['Where are you going?', 'movie:1', 0, 1, 1000, 3500],
      ['Home.', 'movie:1', 1, 1, 1000, 3500],
      ['42', 'movie:1', 2, 2, 4000, 5000],
    ],
  );
  t.same(s[0]?.meta?.subtitle, 'movie');
  t.same(s[0]?.meta?.segment, 1);
  writeFileSync(
    srt,
    '1\n00:14:59,000 --> 00:15:01,000\nStill the first quarter hour.\n\n' +
      '2\n00:15:02,000 --> 00:15:04,000\nThe second one.\n\n3\n01:00:00,000 --> 01:00:02,000\nThe fifth one.\n',
  );
  t.same(
    ((await collect(readDocuments(srt, 0, 'srt'))) as CorpusRecord[]).map((r) => [
      r.meta?.doc,
      r.meta?.segment,
      r.meta?.pos,
    ]),
    [
      ['movie:1', 1, 0],
      ['movie:2', 2, 0],
      ['movie:5', 5, 0],
    ],
    '15-minute segments by cue start, each its own document',
  );
  t.same(
    ((await collect(readDocuments(srt, 0, 'srt', { segmentMinutes: 0 }))) as CorpusRecord[]).map((r) => [
      r.meta?.doc,
      r.meta?.pos,
    ]),
    [
      ['movie', 0],
      ['movie', 1],
      ['movie', 2],
    ],
    '--segment-minutes 0: the file is one document',
  );

  const resumed = await collect(
    readSentences([txt], { documents: true, after: { fileIndex: 0, record: 2 } }),
  );
  t.same(
    resumed.map((r) => (r as CorpusRecord).text),
    ['Second story.', 'Wrapped across lines.'],
    'resume after a sentence',
  );
  t.same(
    (await collect(readSentences([txt]))).map((r) => (r as CorpusRecord).text).slice(0, 2),
    ['First story. It has two sentences.', ''],
    'without --documents a .txt is still one sentence a line',
  );
});

t.test('a sentence comes back with its context, from an index built from documents', async (t) => {
  const corpus = join(dir, 'stories.txt');
  writeFileSync(
    corpus,
    'The ship left the harbour at dawn. The crew sang as they rowed. By noon the coast was gone.\n\n' +
      'A farmer planted wheat in spring. The rain came late that year. Still the harvest was good.\n',
  );
  const out = join(dir, 'index');
  await buildIndex(
    { inputs: [corpus], out, model: 'test/fixtures/tiny-encoder', documents: true, quiet: true },
    () => {},
  );
  const service = await openService({ index: out, model: 'test/fixtures/tiny-encoder', reranker: false });
  t.teardown(() => service.close());
  const ids = [0, 1, 2, 3, 4, 5].map((id) => service.store.get(id)?.text);
  t.equal(ids[1], 'The crew sang as they rowed.');
  t.same(service.context(1, 5), {
    doc: 'stories:1',
    before: [
      {
        id: 0,
        text: 'The ship left the harbour at dawn.',
        meta: { doc: 'stories:1', pos: 0, start: 0, end: 34 },
      },
    ],
    after: [
      { id: 2, text: 'By noon the coast was gone.', meta: { doc: 'stories:1', pos: 2, start: 64, end: 91 } },
    ],
  });
  const jobs = service.openJobs({ dir: join(dir, 'jobs') });
  const app = buildApp({ service, limits: DEFAULT_LIMITS, metrics: new Metrics(), jobs });
  t.teardown(() => app.close());
  const res = await app.inject({ method: 'GET', url: '/v1/sentences/4?context=1' });
  t.equal(res.statusCode, 200);
  t.match(res.json(), {
    id: 4,
    text: 'The rain came late that year.',
    context: { doc: 'stories:2', before: [{ id: 3 }], after: [{ id: 5 }] },
  });
  t.notOk(
    'context' in (await app.inject({ method: 'GET', url: '/v1/sentences/4' })).json(),
    'no context unasked',
  );
  t.equal((await app.inject({ method: 'GET', url: '/v1/sentences/4?context=51' })).statusCode, 400);

  const found = await app.inject({
    method: 'POST',
    url: '/v1/search',
    payload: { text: 'The crew sang as they rowed.', k: 1, rerank: false, context: 1 },
  });
  const cand = found.json().results[0].candidates[0];
  t.equal(cand.context.doc, cand.meta.doc, 'a candidate comes with its own document around it');
  t.ok(cand.context.before.length + cand.context.after.length >= 1);

  const job = (
    await app.inject({ method: 'POST', url: '/v1/jobs', payload: { k: 2, minCosine: -1 } })
  ).json();
  await jobs.manager.wait(job.id);
  const lines = (await app.inject({ method: 'GET', url: `/v1/jobs/${job.id}/results?context=2` })).body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.ok(lines.length > 0, 'the job found pairs');
  for (const p of lines) {
    t.equal(p.a.context.doc, p.a.meta.doc, 'each side carries its own document');
    t.equal(
      p.a.context.before.length + p.a.context.after.length,
      2,
      'two neighbours in a three-sentence document',
    );
  }
  // A sentence deleted since the build is no one's context any more.
  await service.writes.delete([3]);
  t.same(service.context(4, 1)?.before, [], 'the deleted sentence before it is gone');
  t.equal(service.context(4, 1)?.after.length, 1);
  // Exports read context without the service (ContextReader): the same.
  const reader = await ContextReader.open(out);
  t.teardown(() => reader.close());
  t.same(reader.context(4, 1)?.before, [], 'nor in exports');
  t.equal(reader.context(4, 1)?.after.length, 1);
});

t.test('docs align pairs each document with its twin, inside the band', async (t) => {
  const corpus = join(dir, 'twins.txt');
  writeFileSync(
    corpus,
    [
      'The storm closed the harbour for three days. Fishing boats stayed tied to the pier. The mayor promised help for the fishermen.',
      'A storm kept the harbour shut for three days, and the fishing boats stayed at the pier. The mayor said the fishermen would get help.',
      'The orchestra played a new symphony on Friday night. The audience stood and applauded for ten minutes.',
      'On Friday night the orchestra premiered a symphony. The audience gave it a standing ovation of ten minutes.',
    ].join('\n\n'),
  );
  const out = join(dir, 'twins-index');
  await buildIndex(
    { inputs: [corpus], out, model: 'test/fixtures/tiny-encoder', documents: true, quiet: true },
    () => {},
  );
  const pairsFile = join(dir, 'doc-pairs.jsonl');
  execFileSync(
    process.execPath,
    ['dist/cli.js', 'docs', 'align', '--index', out, '--out', pairsFile, '--partners', '1'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const pairs = readFileSync(pairsFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.same(
    pairs.map((p) => [p.a, p.b].sort()),
    [
      ['twins:1', 'twins:2'],
      ['twins:3', 'twins:4'],
    ].sort((x, y) => (x[0] as string).localeCompare(y[0] as string)),
    'each document with its twin',
  );
  for (const p of pairs) t.ok(p.score >= 0.1 && p.score < 0.95, `score ${p.score} inside the band`);
  t.notOk(
    existsSync(`${pairsFile}.partial`),
    "the run's work (kept for a resume) is gone once the pairs are written",
  );
  // --report: the nearest partners' histogram and the band (four documents: too few for the data to propose one)
  const report = join(dir, 'band.json');
  const said = spawnSync(
    process.execPath,
    ['dist/cli.js', 'docs', 'align', '--index', out, '--out', join(dir, 'again.jsonl'), '--report', report],
    { encoding: 'utf8' },
  );
  t.equal(said.status, 0, said.stderr);
  t.match(said.stderr, /nearest compatible partner of each of 4 documents/);
  t.match(said.stderr, /--min 0\.1 \(default\); the data proposes none/);
  t.match(said.stderr, /in \[0\.1, 0\.95\) \(min: default, max: default\)/);
  const band = JSON.parse(readFileSync(report, 'utf8'));
  t.match(band, { min: 0.1, max: 0.95, from: { min: 'default', max: 'default' }, documents: 4 });
  t.equal(
    band.histogram.reduce((n: number, b: { n: number }) => n + b.n, 0),
    4,
    "every document's nearest partner in the histogram",
  );

  // Mining within the document pairs: every pair joins partner documents, never one document with itself.
  const service = await openService({ index: out, model: 'test/fixtures/tiny-encoder', reranker: false });
  t.teardown(() => service.close());
  const { manager, store } = service.openJobs({ dir: join(dir, 'twin-jobs'), dataDir: dir });
  const partner = new Map(
    pairs.flatMap(
      (p) =>
        [
          [p.a, p.b],
          [p.b, p.a],
        ] as Array<[string, string]>,
    ),
  );
  const job = await manager.create({ k: 5, minCosine: -1, docPairs: { path: 'doc-pairs.jsonl' } });
  const done = await manager.wait(job.id);
  t.equal(done.state, 'done', JSON.stringify(done.error ?? {}));
  const mined = [...store.pairs(job.id, 0, 1000)].map((r) => r.pair);
  t.ok(mined.length > 0, `${mined.length} pairs mined`);
  for (const m of mined)
    t.equal(partner.get(String(m.a.meta?.doc)), m.b.meta?.doc, `${m.a.meta?.doc} ~ ${m.b.meta?.doc}`);
  // The same alignment as the job's own first stage gives the same pairs.
  const staged = await manager.create({ k: 5, minCosine: -1, docPairs: { align: { partners: 1 } } });
  t.equal((await manager.wait(staged.id)).state, 'done');
  const key = (m: (typeof mined)[number]) => `${m.a.id}~${m.b.id}`;
  t.same(
    [...store.pairs(staged.id, 0, 1000)].map((r) => key(r.pair)).sort(),
    mined.map(key).sort(),
    'aligning inside the job = mining within the aligned file',
  );
  t.notOk(
    existsSync(join(dir, 'twin-jobs', 'align', staged.id)),
    "the alignment's work (kept for a resume) is gone once the job is done",
  );
  await t.rejects(
    manager.create({ k: 5, docPairs: { path: 'doc-pairs.jsonl', align: {} } }),
    { code: 'BAD_INPUT' },
    'a file or an alignment, not both',
  );

  // Export with each side's context and document, every document (so every document pair) on one side.
  const minedFile = join(dir, 'twin-mined.jsonl');
  writeFileSync(minedFile, mined.map((m) => JSON.stringify(m)).join('\n'));
  const exported = join(dir, 'twin-export');
  await exportDataset({
    source: { pairs: minedFile },
    out: exported,
    formats: ['jsonl'],
    split: { names: ['train', 'test'], fractions: [0.5, 0.5] },
    groupBy: 'doc',
    label: 'paraphrase',
    seed: 1,
    context: 1,
    index: out,
  });
  const splitOfDoc = new Map<string, string>();
  let rows = 0;
  for (const split of ['train', 'test']) {
    for (const line of readFileSync(join(exported, `${split}.jsonl`), 'utf8').split('\n')) {
      if (line === '') continue;
      const r = JSON.parse(line);
      rows++;
      t.equal(partner.get(r.s1_doc), r.s2_doc, 'both documents named');
      for (const [doc, text, ctx] of [
        [r.s1_doc, r.s1, r.s1_context],
        [r.s2_doc, r.s2, r.s2_context],
      ]) {
        t.equal(splitOfDoc.get(doc) ?? split, split, `document ${doc} on one side of the split`);
        splitOfDoc.set(doc, split);
        const sentences = service.store.get(Number(doc === r.s1_doc ? r.s1_id : r.s2_id));
        t.equal(sentences?.text, text);
        t.ok(ctx.before.length + ctx.after.length >= 1, 'a context window');
        t.notOk([...ctx.before, ...ctx.after].includes(text), 'the context leaves the sentence out');
      }
    }
  }
  t.equal(rows, mined.length, 'every pair exported');
  await t.rejects(
    exportDataset({
      source: { pairs: minedFile },
      out: exported,
      formats: ['jsonl'],
      split: { names: ['train'], fractions: [1] },
      label: 'paraphrase',
      seed: 1,
      context: 1,
    }),
    { code: 'BAD_INPUT' },
    'context needs the index',
  );

  await t.rejects(
    manager.create({ k: 5, docPairs: { path: 'nope.jsonl' } }),
    { code: 'FILE_NOT_FOUND', field: 'docPairs.path' },
    'a missing pairs file is refused at submit, not failed later',
  );
  const noDataDir = service.openJobs({ dir: join(dir, 'no-data-dir-jobs') });
  await t.rejects(
    noDataDir.manager.create({ k: 5, docPairs: { path: 'doc-pairs.jsonl' } }),
    { code: 'BAD_INPUT', field: 'docPairs.path', message: /--data-dir/ },
    'a pairs file on a service without --data-dir is refused at submit',
  );
  execFileSync(
    process.execPath,
    ['dist/cli.js', 'docs', 'align', '--index', out, '--out', pairsFile, '--partners', '1', '--max', '0.2'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  t.notOk(
    readFileSync(pairsFile, 'utf8').includes('"twins:2"') &&
      readFileSync(pairsFile, 'utf8').includes('twins:1"'),
    'too similar for a band below 0.2',
  );
});

t.test('docs align --differ pairs only documents from different sources', async (t) => {
  const corpus = join(dir, 'sources.jsonl');
  const docs = [
    ['x1', 'wire', 'The storm closed the harbour for three days. Fishing boats stayed tied to the pier.'],
    ['x2', 'wire', 'The storm shut the harbour for three days. Fishing boats stayed tied at the pier.'],
    ['y1', 'paper', 'A storm kept the harbour shut for three days, and the boats stayed at the pier.'],
    [
      'y2',
      'paper',
      'On Friday night the orchestra premiered a symphony. The audience stood for ten minutes.',
    ],
  ];
  writeFileSync(corpus, docs.map(([doc, source, text]) => JSON.stringify({ doc, source, text })).join('\n'));
  const out = join(dir, 'sources-index');
  await buildIndex(
    { inputs: [corpus], out, model: 'test/fixtures/tiny-encoder', documents: true, quiet: true },
    () => {},
  );
  const align = (extra: string[]) => {
    const file = join(dir, 'sources-pairs.jsonl');
    execFileSync(
      process.execPath,
      [
        'dist/cli.js',
        'docs',
        'align',
        '--index',
        out,
        '--out',
        file,
        '--partners',
        '1',
        '--max',
        '1.01',
        ...extra,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    return readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { a: string; b: string });
  };
  const key = (p: { a: string; b: string }) => [p.a, p.b].sort().join('~');
  t.ok(align([]).map(key).includes('x1~x2'), 'without --differ the near copy from the same source pairs');
  const across = align(['--differ', 'source']);
  t.ok(across.length > 0, 'pairs across sources remain');
  const sourceOf = new Map(docs.map(([doc, source]) => [doc, source]));
  for (const p of across) t.not(sourceOf.get(p.a), sourceOf.get(p.b), `${key(p)} crosses sources`);
  t.ok(
    across.map(key).some((k) => k === 'x1~y1' || k === 'x2~y1'),
    'the storm story pairs across sources',
  );
  // A typo or half a window is refused, naming what the documents have, not read as "no filter".
  const refused = (extra: string[]) => {
    try {
      align(extra);
      return '';
    } catch (e) {
      return String((e as { stderr?: Buffer }).stderr ?? e);
    }
  };
  t.match(refused(['--differ', 'sources']), /no document has the key "sources" \(the keys: .*source/);
  t.match(refused(['--same', 'outlet']), /no document has the key "outlet"/);
  t.match(refused(['--window-key', 'source', '--days', '7']), /no document has a date under "source"/);
  t.match(refused(['--days', '7']), /needs both --window-key and --days/);
});

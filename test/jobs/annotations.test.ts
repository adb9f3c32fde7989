/**
 * The annotation store (real LMDB) and its export: one record per (annotator, pair), replaced and
 * re-ordered on a new write, removed by undo, kept across a reopen; labels checked against their scheme;
 * the JSONL and TSV exports read back by the project's pair readers, in TypeScript and in Python.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { AnnotationStore, annotationId, exportLines, labelFor } from '../../src/annotations/index.js';
import { readPairs } from '../../src/corpus/pairs.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-annotations-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const A = 'A gentle answer turns away wrath.';
const B = 'A soft answer turneth away wrath.';
const C = 'Grievous words stir up anger.';

t.test('labels are checked against their scheme and stored in one spelling', async (t) => {
  t.equal(labelFor('binary', 'accept', undefined), 'paraphrase');
  t.equal(labelFor('binary', 'reject', 'ignored'), 'not_paraphrase');
  t.equal(labelFor('binary', 'label', '1'), 'paraphrase');
  t.equal(labelFor('binary', 'label', ' Not_Paraphrase '), 'not_paraphrase');
  t.equal(labelFor('turku', 'accept', undefined), '4');
  t.equal(labelFor('turku', 'reject', undefined), '2');
  t.equal(labelFor('turku', 'label', '4>si'), '4>is');
  t.equal(labelFor('turku', 'label', '3'), '3');
  for (const [scheme, label] of [
    ['turku', '5'],
    ['turku', '4<>'],
    ['turku', 'paraphrase'],
    ['binary', '4'],
  ] as const) {
    t.throws(
      () => labelFor(scheme, 'label', label),
      { name: 'ParamineError', code: 'BAD_INPUT', field: 'label' },
      `${scheme} refuses ${label}`,
    );
  }
  t.throws(() => labelFor('turku', 'label', undefined), /required/);
});

t.test('one record per annotator and pair; a new write replaces and moves it last', async (t) => {
  const store = AnnotationStore.open(join(dir, 'replace'));
  t.teardown(() => store.close());
  const first = await store.put({
    s1: A,
    s2: B,
    label: 'paraphrase',
    scheme: 'binary',
    decision: 'accept',
    annotator: 'ana',
  });
  await store.put({
    s1: A,
    s2: C,
    label: 'not_paraphrase',
    scheme: 'binary',
    decision: 'reject',
    annotator: 'ana',
  });
  await store.put({ s1: A, s2: B, label: '4', scheme: 'turku', decision: 'accept', annotator: 'ben' });
  const again = await store.put({
    s1: A,
    s2: B,
    label: 'not_paraphrase',
    scheme: 'binary',
    decision: 'label',
    annotator: 'ana',
  });
  t.equal(again.id, first.id, 'same annotator and pair: same id');
  t.equal(again.id, annotationId('ana', A, B));
  t.not(annotationId('ben', A, B), first.id, 'another annotator: another record');
  const all = [...store.list()];
  t.same(
    all.map((a) => [a.annotator, a.s2, a.label]),
    [
      ['ana', C, 'not_paraphrase'],
      ['ben', B, '4'],
      ['ana', B, 'not_paraphrase'],
    ],
    'write order, the replaced record last',
  );
  t.same(
    [...store.list({ annotator: 'ana', scheme: 'binary', decision: 'label' })].map((a) => a.s2),
    [B],
  );
  t.same(
    [...store.list({}, { reverse: true })].map((a) => a.annotator),
    ['ana', 'ben', 'ana'],
  );
  t.same(store.summary(), {
    total: 3,
    byScheme: { binary: 2, turku: 1 },
    byLabel: { 'binary:not_paraphrase': 2, 'turku:4': 1 },
    byAnnotator: { ana: 2, ben: 1 },
  });
  t.match(again.at, /^\d{4}-\d\d-\d\dT/);
  t.equal([...store.list({ since: '2999-01-01T00:00:00Z' })].length, 0);
});

t.test('remove (undo) and reopen', async (t) => {
  const path = join(dir, 'reopen');
  let store = AnnotationStore.open(path);
  const a = await store.put({ s1: A, s2: B, label: 'paraphrase', scheme: 'binary', decision: 'accept' });
  await store.put({ s1: A, s2: C, label: '2', scheme: 'turku', decision: 'reject', s1_id: 3, s2_id: 9 });
  t.same((await store.remove(a.id))?.s2, B, 'returns what it removed');
  t.equal(await store.remove(a.id), undefined, 'twice: nothing');
  t.equal(store.get(a.id), undefined);
  await store.close();
  t.throws(() => store.get(a.id), /closed/);
  store = AnnotationStore.open(path);
  t.teardown(() => store.close());
  const kept = [...store.list()];
  t.same(
    kept.map((r) => [r.s2, r.label, r.s1_id, r.s2_id, r.annotator]),
    [[C, '2', 3, 9, undefined]],
  );
  await store.put({ s1: B, s2: C, label: '4', scheme: 'turku', decision: 'accept' });
  t.same(
    [...store.list()].map((r) => r.s1),
    [A, B],
    'new writes go after the reopened ones',
  );
});

t.test('exports read back by the pair readers (TypeScript and Python)', async (t) => {
  const store = AnnotationStore.open(join(dir, 'export'));
  t.teardown(() => store.close());
  const tricky = 'Quotes " stay, tabs\tand\nbreaks do not.';
  await store.put({
    s1: A,
    s2: B,
    label: '4>is',
    scheme: 'turku',
    decision: 'label',
    annotator: 'ana',
    s2_id: 7,
    cosine: 0.91,
    probabilities: { paraphrase: 0.8, not_paraphrase: 0.2 },
    predicted: 'paraphrase',
    source: { kind: 'search' },
  });
  await store.put({ s1: A, s2: tricky, label: '2', scheme: 'turku', decision: 'reject', annotator: 'ana' });
  await store.put({ s1: C, s2: B, label: 'paraphrase', scheme: 'binary', decision: 'accept' });
  const turku = [...store.list({ scheme: 'turku' })];
  const files = {
    jsonl: join(dir, 'turku.jsonl'),
    tsv: join(dir, 'turku.tsv'),
  };
  writeFileSync(files.jsonl, [...exportLines(turku, 'jsonl')].join(''));
  writeFileSync(files.tsv, [...exportLines(turku, 'tsv')].join(''));
  const tsvLines = [...exportLines(turku, 'tsv')];
  t.equal(tsvLines[0], 's1\ts2\tlabel\n', 'TSV header');
  t.equal(tsvLines.length, 3);

  const expected = [
    [A, B, '4>is'],
    [A, 'Quotes " stay, tabs and breaks do not.', '2'],
  ];
  const jsonl = await readPairs(files.jsonl);
  t.same(
    jsonl.map((p) => [p.s1, p.s2, p.label]),
    [
      [A, B, '4>is'],
      [A, tricky, '2'],
    ],
    'JSONL keeps the texts exactly',
  );
  const tsv = await readPairs(files.tsv);
  t.same(
    tsv.map((p) => [p.s1, p.s2, p.label]),
    expected,
    'TSV: one line a pair',
  );
  const line = JSON.parse([...exportLines(turku, 'jsonl')][0] as string);
  t.same(Object.keys(line).slice(0, 3), ['s1', 's2', 'label'], 'pair keys first');
  t.match(line, { s2_id: 7, annotator: 'ana', scheme: 'turku', cosine: 0.91, source: { kind: 'search' } });

  // The training kit reads them too (paramine-train sbert --pairs, reranker --pairs): its reader, with the
  // label scheme's positive flag, in the venv scripts/setup makes (skipped only where there is none).
  const python = [process.env.PARAMINE_PYTHON, '.venv/bin/python'].find(
    (p) => p !== undefined && spawnSync(p, ['-c', 'import paramine_train.pairs']).status === 0,
  );
  await t.test(
    'the training kit reads them too',
    { skip: python ? false : 'no Python with the training kit (pip install -e training)' },
    async (t) => {
      const script = [
        'import json, sys',
        'from paramine_train.pairs import read_pairs',
        'print(json.dumps([[p.s1, p.s2, p.meta["label"], p.label] for f in sys.argv[1:] for p in read_pairs(f, "x")]))',
      ].join('\n');
      const r = spawnSync(python as string, ['-c', script, files.jsonl, files.tsv], { encoding: 'utf8' });
      t.equal(r.status, 0, r.stderr);
      const rows = JSON.parse(r.stdout) as Array<[string, string, string, number]>;
      t.same(
        rows.map((x) => x.slice(0, 3)),
        [[A, B, '4>is'], [A, tricky, '2'], ...expected],
        'the same texts and labels from both files',
      );
      t.same(
        rows.map((x) => x[3]),
        [1, 0, 1, 0],
        'positive by the Turku scheme (base 3 or 4)',
      );
    },
  );
});

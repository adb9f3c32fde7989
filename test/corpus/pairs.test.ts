import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { type LabeledPair, readPairs } from '../../src/corpus/index.js';
import { ParamineError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-pairs-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Buffer) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};
/** Pairs without `where`, and `where` as the line number only, for compact expectations. */
const strip = (pairs: LabeledPair[]) => pairs.map(({ where: _, ...p }) => p);
const lines = (pairs: LabeledPair[]) => pairs.map((p) => Number(p.where.slice(p.where.lastIndexOf(':') + 1)));

type Assert = Pick<typeof t, 'ok' | 'equal' | 'match' | 'fail'>;

/**
 * Expects readPairs(path) to fail with BAD_FILE whose field is `path:line` (a number), that other file:line
 * (a string with a colon), or `input` (whole-file problems; the message then starts with the path).
 */
async function rejects(t: Assert, path: string, line: number | string, message: RegExp) {
  const where = typeof line === 'number' ? `${path}:${line}` : line;
  try {
    await readPairs(path);
    t.fail(`expected ${path} to be rejected`);
  } catch (e) {
    t.ok(e instanceof ParamineError, 'a ParamineError');
    const err = e as ParamineError;
    t.equal(err.code, 'BAD_FILE');
    t.equal(err.field, where, `field is ${where}`);
    const start = where === 'input' ? `${path}: ` : `${where}: `;
    t.ok(err.message.startsWith(start), `message starts with ${start}`);
    t.match(err.message, message);
  }
}

const MRPC =
  '\uFEFFQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n' +
  '1\t702876\t702977\tAmrozi called him "the witness".\tReferring to him as only "the witness", Amrozi.\r\n' +
  '0\t2108705\t2108831\tYucaipa owned "Dominick\'s.\tYucaipa bought it.\r\n' +
  '1\t1\t2\t"Quoted start, never closed.\t"Fine," he said.\r\n';

t.test('MRPC TSV: BOM, CRLF, #1/#2 String, Quality label, bare double quotes', async (t) => {
  const p = file('mrpc.tsv', MRPC);
  const pairs = await readPairs(p);
  t.same(strip(pairs), [
    {
      s1: 'Amrozi called him "the witness".',
      s2: 'Referring to him as only "the witness", Amrozi.',
      label: '1',
    },
    { s1: 'Yucaipa owned "Dominick\'s.', s2: 'Yucaipa bought it.', label: '0' },
    { s1: '"Quoted start, never closed.', s2: '"Fine," he said.', label: '1' },
  ]);
  t.same(
    pairs.map((x) => x.where),
    [`${p}:2`, `${p}:3`, `${p}:4`],
  );
});

t.test('CSV: RFC quoting, embedded comma, doubled quote and newline; where is the first line', async (t) => {
  const p = file(
    'pit.csv',
    'sentence1,sentence2,label\n' +
      '"Today, the #solstice .",It\'s the solstice .,1\n' +
      '"Two\nlines ""quoted""",plain,0\n' +
      'a tweet,another tweet,1\n',
  );
  const pairs = await readPairs(p);
  t.same(strip(pairs), [
    { s1: 'Today, the #solstice .', s2: "It's the solstice .", label: '1' },
    { s1: 'Two\nlines "quoted"', s2: 'plain', label: '0' },
    { s1: 'a tweet', s2: 'another tweet', label: '1' },
  ]);
  t.same(lines(pairs), [2, 3, 5]);
});

t.test('CSV without a label column: label absent', async (t) => {
  const pairs = await readPairs(file('auto.csv', 'sentence1,sentence2\nfirst,"the ""first"""\n'));
  t.same(strip(pairs), [{ s1: 'first', s2: 'the "first"' }]);
  t.notOk('label' in (pairs[0] ?? {}), 'no label key at all');
});

t.test('s1/s2 header in any case, extra columns ignored, label kept exactly', async (t) => {
  const pairs = await readPairs(file('x.tsv', 'id\tS1\tS2\tLabel\tnote\n7\ta\tb\t 4>i \tn\n'));
  t.same(strip(pairs), [{ s1: 'a', s2: 'b', label: ' 4>i ' }]);
});

const TURKU_JSON = `[
    {
        "label": "4>i",
        "source": "pb",
        "txt1": "Aalto \\"BIZ\\" Prof. {not a brace}",
        "txt2": "Silva Mysterium Oy."
    },
    {"label": "1", "txt1": "x [1]", "txt2": "y"},

    {
        "label": 3,
        "txt1": "kolme",
        "txt2": "three"
    }
]
`;

t.test('JSON array (Turku): txt1/txt2, labels as strings, where = line of each object', async (t) => {
  const p = file('turku.json', TURKU_JSON);
  const pairs = await readPairs(p);
  t.same(strip(pairs), [
    { s1: 'Aalto "BIZ" Prof. {not a brace}', s2: 'Silva Mysterium Oy.', label: '4>i' },
    { s1: 'x [1]', s2: 'y', label: '1' },
    { s1: 'kolme', s2: 'three', label: '3' },
  ]);
  t.same(lines(pairs), [2, 8, 10]);
});

t.test('JSONL (and JSON lines in a .json file), blank lines skipped, no labels', async (t) => {
  const body = '{"s1":"a","s2":"b"}\n\n{"sentence1":"c","sentence2":"d","extra":1}\r\n';
  for (const name of ['p.jsonl', 'p-lines.json']) {
    const pairs = await readPairs(file(name, body));
    t.same(strip(pairs), [
      { s1: 'a', s2: 'b' },
      { s1: 'c', s2: 'd' },
    ]);
    t.same(lines(pairs), [1, 3]);
  }
});

t.test('ParaSCI .src/.tgt: line-aligned, all positive; .tgt given works too', async (t) => {
  const src = file('val.src', 'first source\nsecond source\n');
  const tgt = file('val.tgt', 'first target\nsecond target\n');
  const pairs = await readPairs(src);
  t.same(strip(pairs), [
    { s1: 'first source', s2: 'first target' },
    { s1: 'second source', s2: 'second target' },
  ]);
  t.same(
    pairs.map((p) => p.where),
    [`${src}:1`, `${src}:2`],
  );
  t.same(strip(await readPairs(tgt)), strip(pairs));
});

t.test('gzip: by extension and by magic bytes alone', async (t) => {
  const tsv = await readPairs(file('mrpc.tsv.gz', gzipSync(MRPC)));
  t.equal(tsv.length, 3);
  t.equal(tsv[1]?.label, '0');
  const json = await readPairs(file('turku.json.gz', gzipSync(TURKU_JSON)));
  t.same(
    json.map((p) => p.label),
    ['4>i', '1', '3'],
  );
  t.same(lines(json), [2, 8, 10]);
  const csv = await readPairs(file('sneaky.csv', gzipSync('s1,s2\na,b\n')));
  t.same(strip(csv), [{ s1: 'a', s2: 'b' }]);
  file('z.src.gz', gzipSync('one\ntwo\n'));
  file('z.tgt.gz', gzipSync('uno\ndos\n'));
  t.same(strip(await readPairs(join(dir, 'z.src.gz'))), [
    { s1: 'one', s2: 'uno' },
    { s1: 'two', s2: 'dos' },
  ]);
});

t.test('bad tables: unknown header, missing column, column count, empty text or label', async (t) => {
  await rejects(t, file('unknown.csv', 'a,b,label\nx,y,1\n'), 1, /unknown header.*"a", "b", "label"/);
  await rejects(t, file('missing.csv', 'sentence1,label\nx,1\n'), 1, /missing column "sentence2"/);
  await rejects(t, file('dup.tsv', 's1\ts2\tS1\nx\ty\tz\n'), 1, /"s1" appears twice/);
  await rejects(
    t,
    file('cols.tsv', 's1\ts2\tlabel\na\tb\t1\na\tb\t1\textra\n'),
    3,
    /expected 3 columns.*found 4/,
  );
  await rejects(t, file('short.tsv', 's1\ts2\tlabel\na\tb\n'), 2, /expected 3 columns.*found 2/);
  await rejects(
    t,
    file('empty-text.csv', 'sentence1,sentence2,label\na,b,1\n"multi\nline",  ,0\n'),
    3,
    /empty text.*sentence2/,
  );
  await rejects(t, file('empty-label.csv', 's1,s2,label\na,b,\n'), 2, /empty label/);
  await rejects(t, file('empty.csv', ''), 1, /empty file/);
  await rejects(t, file('open-quote.csv', 's1,s2\na,b\n"never closed,c\nmore,lines\n'), 3, /unreadable CSV/);
});

t.test(
  'bad JSON: invalid line, syntax error in an array, missing or non-string field, mixed labels',
  async (t) => {
    await rejects(t, file('bad.jsonl', '{"s1":"a","s2":"b"}\n{"s1":"a",\n'), 2, /invalid JSON line/);
    await rejects(
      t,
      file('bad-array.json', '[\n  {"txt1": "a", "txt2": "b"},\n  {"txt1": "a" "txt2": "b"}\n]\n'),
      3,
      /invalid JSON/,
    );
    await rejects(
      t,
      file('missing.json', '[\n{"txt1":"a","txt2":"b","label":"1"},\n{"txt1":"a","label":"2"}\n]'),
      3,
      /missing field "txt2"/,
    );
    await rejects(t, file('nonstring.jsonl', '{"s1":"a","s2":5}\n'), 1, /"s2" is not a string/);
    await rejects(t, file('empty.jsonl', '{"s1":"a","s2":" "}\n'), 1, /empty text in field "s2"/);
    await rejects(t, file('notobj.jsonl', '["a","b"]\n'), 1, /expected a JSON object/);
    await rejects(t, file('unknown.jsonl', '{"a":"x","b":"y"}\n'), 1, /unknown object/);
    await rejects(
      t,
      file('mixed.jsonl', '{"s1":"a","s2":"b","label":"1"}\n{"s1":"a","s2":"b"}\n'),
      2,
      /no label/,
    );
    await rejects(
      t,
      file('objlabel.jsonl', '{"s1":"a","s2":"b","label":{"x":1}}\n'),
      1,
      /string or a number/,
    );
  },
);

t.test('bad .src/.tgt and other files', async (t) => {
  const src = file('m.src', 'a\nb\nc\n');
  const tgt = file('m.tgt', 'x\ny\n');
  await rejects(t, src, `${tgt}:3`, /line counts differ: m\.src has 3 lines, m\.tgt has 2/);
  await rejects(t, file('lonely.src', 'a\n'), 'input', /no line-aligned target file lonely\.tgt/);
  file('e.src', 'a\n\nc\n');
  file('e.tgt', 'x\ny\nz\n');
  await rejects(t, join(dir, 'e.src'), 2, /empty sentence/);
  await rejects(t, file('p.txt', 'a\n'), 'input', /unknown pair file format/);
  try {
    await readPairs(file('fake.csv.gz', 's1,s2\na,b\n'));
    t.fail('a .gz that is not gzip accepted');
  } catch (e) {
    t.equal((e as ParamineError).code, 'BAD_FILE');
    t.match((e as Error).message, /fake\.csv\.gz: named \.gz but is not gzip-compressed/);
  }
  const rows = Array.from({ length: 2000 }, (_, i) => `row ${i * 7919},other ${(i * 104729) % 9973}\n`);
  const full = gzipSync(`s1,s2\n${rows.join('')}`);
  const truncated = full.subarray(0, full.length >> 1);
  try {
    await readPairs(file('truncated.csv.gz', truncated));
    t.fail('truncated gzip accepted');
  } catch (e) {
    t.equal((e as ParamineError).code, 'BAD_FILE');
    t.match((e as Error).message, /truncated\.csv\.gz/);
  }
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { type BadRecord, type CorpusRecord, readSentences } from '../../src/corpus/index.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-corpus-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Buffer) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

async function collect(files: string[], opts = {}) {
  const out: Array<CorpusRecord | BadRecord> = [];
  for await (const r of readSentences(files, opts)) out.push(r);
  return out;
}

t.test('txt, gzipped jsonl, tsv and csv in one stream, with positions and metadata', async (t) => {
  const txt = file('a.txt', 'first line\n\nthird "quoted" line\r\n');
  const jsonl = file(
    'b.jsonl.gz',
    gzipSync('{"text":"from json","group":"p1","id":7}\n{"text":"second json"}\n'),
  );
  const tsv = file('c.tsv', 'id\ttext\tpaper\n1\the said "hi\tP9\n2\tplain\tP9\n');
  const csv = file('d.csv', 'text,source\n"a, quoted, text",web\nsimple,web\n');
  const rows = (await collect([txt, jsonl, tsv, csv])) as CorpusRecord[];
  t.same(
    rows.map((r) => r.text),
    [
      'first line',
      '',
      'third "quoted" line',
      'from json',
      'second json',
      'he said "hi',
      'plain',
      'a, quoted, text',
      'simple',
    ],
  );
  t.same(rows[3]?.meta, { group: 'p1', id: 7 });
  t.equal(rows[4]?.meta, undefined);
  t.same(rows[5]?.meta, { id: '1', paper: 'P9' });
  t.same(rows[7]?.meta, { source: 'web' });
  t.same(
    rows.map((r) => [r.fileIndex, r.record]),
    [
      [0, 1],
      [0, 2],
      [0, 3],
      [1, 1],
      [1, 2],
      [2, 1],
      [2, 2],
      [3, 1],
      [3, 2],
    ],
  );
  t.equal(rows[6]?.where, `${tsv}:3`);

  const resumed = (await collect([txt, jsonl, tsv, csv], {
    after: { fileIndex: 1, record: 1 },
  })) as CorpusRecord[];
  t.same(
    resumed.map((r) => r.text),
    ['second json', 'he said "hi', 'plain', 'a, quoted, text', 'simple'],
  );
});

t.test('invalid JSON lines: fatal with file:line, or skipped and reported', async (t) => {
  const bad = file('bad.jsonl', '{"text":"ok"}\n{"text": oops}\n{"txt":"no text"}\n{"text":"fine"}\n');
  await t.rejects(collect([bad]), { code: 'BAD_FILE', message: new RegExp(`${bad}:2: invalid JSON`) });
  const rows = await collect([bad], { onBadRecord: 'skip' });
  t.same(
    rows.map((r) => ('error' in r ? `bad:${r.where}` : r.text)),
    ['ok', `bad:${bad}:2`, `bad:${bad}:3`, 'fine'],
  );
});

t.test('missing files, broken gzip, unknown formats and tables without a text column', async (t) => {
  await t.rejects(collect([join(dir, 'nope.txt')]), { code: 'FILE_NOT_FOUND' });
  const gz = gzipSync('line one\nline two\n'.repeat(1000));
  const truncated = file('broken.txt.gz', gz.subarray(0, gz.length - 30));
  await t.rejects(collect([truncated]), { code: 'BAD_FILE', message: /broken\.txt\.gz: unreadable gzip/ });
  const fake = file('fake.txt.gz', 'not gzip at all\n');
  await t.rejects(collect([fake]), { code: 'BAD_FILE', message: /not gzip-compressed/ });
  await t.rejects(collect([file('x.parquet', 'x')]), { code: 'BAD_FILE', message: /unknown corpus format/ });
  await t.rejects(collect([file('n.tsv', 'id\tsentence\n1\tx\n')]), {
    code: 'BAD_FILE',
    message: /no "text" column/,
  });
});

t.test('a truncated gzip table is an error, not a shorter table', async (t) => {
  const gz = gzipSync(`text,n\n${'some sentence here,1\n'.repeat(5000)}`);
  const truncated = file('broken.csv.gz', gz.subarray(0, Math.floor(gz.length / 2)));
  await t.rejects(collect([truncated]), { code: 'BAD_FILE', message: /broken\.csv\.gz: unreadable gzip/ });
});

/**
 * The queue's pure parts, no Redis needed: --queue URLs, chunking by byte ranges (every record read once,
 * numbered as the whole-file reader numbers it), mining ranges of whole batches, and published outputs
 * (a marker that no longer matches its files is not a finished job).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { readSentenceRange, readSentences } from '../../src/corpus/index.js';
import { parseQueueUrl } from '../../src/queue/connection.js';
import { publish, readChecked, readMarker } from '../../src/queue/layout.js';
import { mineRanges } from '../../src/queue/mine.js';
import { splitFile } from '../../src/queue/split.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-queue-units-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('--queue URLs', async (t) => {
  t.same(parseQueueUrl('redis://10.0.0.5:6380/3'), {
    host: '10.0.0.5',
    port: 6380,
    db: 3,
    prefix: 'paramine',
  });
  t.same(parseQueueUrl('redis://:s%40cret@h/0?prefix=c2'), {
    host: 'h',
    port: 6379,
    db: 0,
    prefix: 'c2',
    password: 's@cret',
  });
  t.throws(() => parseQueueUrl('http://h:1/0'), { code: 'BAD_INPUT', message: /only redis:\/\// });
  t.throws(() => parseQueueUrl('redis://h:1/99'), { code: 'BAD_INPUT', message: /0\.\.15/ });
  t.throws(() => parseQueueUrl('not a url'), { code: 'BAD_INPUT', field: 'queue' });
});

t.test('byte-range chunks read every record once, numbered as the whole file', async (t) => {
  const lines = ['first', '', 'third\r', '{"no": "json"}', 'fifth', 'sixth', 'seventh'];
  for (const [name, text] of [
    ['a.txt', `${lines.join('\n')}`], // no final newline
    ['b.txt', `${lines.join('\n')}\n`],
    ['c.jsonl', `${lines.map((l) => JSON.stringify({ text: l })).join('\n')}\n`],
  ] as const) {
    const path = join(dir, name);
    writeFileSync(path, text);
    const whole = [];
    for await (const r of readSentences([path])) whole.push(r);
    for (const size of [1, 2, 3, 100]) {
      const chunks = splitFile(path, 0, size);
      t.equal(chunks.length, Math.ceil(lines.length / size), `${name}: ${chunks.length} chunks of ${size}`);
      const read = [];
      for (const c of chunks) {
        if ('whole' in c) throw new Error('a plain file is split by byte ranges');
        for await (const r of readSentenceRange(path, 0, c)) read.push(r);
      }
      t.same(read, whole, `${name} in chunks of ${size} lines`);
    }
  }
  writeFileSync(join(dir, 'd.tsv'), 'text\nx\n');
  t.same(splitFile(join(dir, 'd.tsv'), 2, 1), [{ fileIndex: 2, whole: true }], 'a table is one chunk');
});

t.test('mining ranges are whole batches', async (t) => {
  t.same(mineRanges(0, 700, 32, 96), [
    { start: 0, end: 96 },
    { start: 96, end: 192 },
    { start: 192, end: 288 },
    { start: 288, end: 384 },
    { start: 384, end: 480 },
    { start: 480, end: 576 },
    { start: 576, end: 672 },
    { start: 672, end: 700 },
  ]);
  t.same(mineRanges(64, 100, 32, 10), [
    { start: 64, end: 96 },
    { start: 96, end: 100 },
  ]);
});

t.test('published outputs: a marker that does not match its files is no finished job', async (t) => {
  const base = join(dir, 'job-1');
  t.equal(readMarker(base), undefined, 'nothing published yet');
  publish(base, { rows: Buffer.from('a\nb\n') }, { rows: 2 });
  const m = readMarker(base, true);
  t.same(m?.info, { rows: 2 });
  t.equal(readChecked(base, 'rows', m as NonNullable<typeof m>).toString(), 'a\nb\n');
  writeFileSync(`${base}.rows`, 'a\nc\n'); // same size, other bytes
  t.ok(readMarker(base), 'sizes match: found by the cheap check');
  t.equal(readMarker(base, true), undefined, 'the checksum does not');
  t.throws(() => readChecked(base, 'rows', m as NonNullable<typeof m>), { code: 'CHECKSUM_MISMATCH' });
  writeFileSync(`${base}.rows`, 'a\n');
  t.equal(readMarker(base), undefined, 'nor a file of another size');
});

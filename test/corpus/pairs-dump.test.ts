/**
 * `paramine pairs dump`: the JSON lines the training scripts (training/paramine_train/pairs.py) read instead of
 * parsing pair files themselves. Runs the real CLI (dist/cli.js, built by `npm run build:ts`) on small files.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { pairLines } from '../../src/cli/pairs-command.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-dump-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};
const parse = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

t.test('binary, Turku and positive-only files: labels kept, positive from the scheme', async (t) => {
  const mrpc = file(
    'm.tsv',
    'Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tA "b\tA b\n0\t3\t4\tc\td\n',
  );
  t.same(parse(await pairLines(mrpc)), [
    { s1: 'A "b', s2: 'A b', label: '1', positive: true, scheme: 'binary', source: mrpc, where: `${mrpc}:2` },
    { s1: 'c', s2: 'd', label: '0', positive: false, scheme: 'binary', source: mrpc, where: `${mrpc}:3` },
  ]);
  const turku = file(
    't.json',
    '[{"txt1": "a", "txt2": "b", "label": "4>i"},\n{"txt1": "c", "txt2": "d", "label": "2"}]',
  );
  const rows = parse(await pairLines(turku));
  t.same(
    rows.map((r) => [r.label, r.positive, r.scheme]),
    [
      ['4>i', true, 'turku'],
      ['2', false, 'turku'],
    ],
  );
  t.same(
    parse(await pairLines(turku, ['4'])).map((r) => r.positive),
    [true, false],
    '--positive 4 takes 4>i',
  );
  const src = file('p.src', 'one\ntwo\n');
  file('p.tgt', 'uno\ndos\n');
  t.same(
    parse(await pairLines(src)).map((r) => [r.s2, r.label, r.positive, r.scheme]),
    [
      ['uno', null, true, 'positive-only'],
      ['dos', null, true, 'positive-only'],
    ],
  );
  const custom = file('c.jsonl', '{"s1": "a", "s2": "b", "label": "maybe"}\n');
  t.same(
    parse(await pairLines(custom)).map((r) => r.positive),
    [null],
    'a label no scheme explains: null',
  );
});

t.test(
  'the CLI writes every file in order, to stdout or --out; a bad file exits 2 with file:line',
  async (t) => {
    const a = file('a.csv', 'sentence1,sentence2,label\nx,y,1\n');
    const b = file('b.csv', 'sentence1,sentence2,label\nu,v,0\n');
    const cli = join(process.cwd(), 'dist/cli.js');
    const stdout = execFileSync('node', [cli, 'pairs', 'dump', a, b], { encoding: 'utf8' });
    t.same(
      parse(stdout.trim().split('\n')).map((r) => r.s1),
      ['x', 'u'],
    );
    const out = join(dir, 'out.jsonl');
    execFileSync('node', [cli, 'pairs', 'dump', a, '--out', out]);
    t.equal(readFileSync(out, 'utf8'), `${(await pairLines(a)).join('\n')}\n`);
    const broken = file('bad.csv', 'sentence1,sentence2,label\nx,,1\n');
    const r = spawnSync('node', [cli, 'pairs', 'dump', broken], { encoding: 'utf8' });
    t.equal(r.status, 2);
    t.match(r.stderr, `BAD_FILE: ${broken}:2: empty text`);
  },
);

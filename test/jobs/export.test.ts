/**
 * `paramine export`: grouped splits put no group on two sides, time splits keep order, pairs sharing a
 * group with a test set are dropped, spans cut the paraphrase out of its sentence, and the Parquet files
 * read back (with hyparquet here, and with pyarrow when a Python with it is at hand).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import t from 'tap';
import { type ExportRow, exportDataset } from '../../src/jobs/export.js';
import { parseSplitPlan, type SplitPlan } from '../../src/jobs/splits.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-export-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

// 300 pairs over 40 papers; each side carries its paper and a date; every 7th pair is a sub-sentence pair.
const pairs = Array.from({ length: 300 }, (_, i) => {
  const paper = `P${(i * 7) % 40}`;
  const date = new Date(Date.UTC(2023, 0, 1 + (i % 90))).toISOString();
  const a = { id: 2 * i, text: `sentence a${i}`, meta: { paper, date } };
  const b = {
    id: 2 * i + 1,
    text: `first part ${i}, second part ${i}`,
    meta: { paper: i % 50 === 0 ? 'P0' : paper, date },
  };
  return {
    seq: i,
    a,
    b,
    cosine: 0.8,
    lexical: { charNgramCosine: 0.5, bleu: 10, plr: 0.2, lengthRatio: 1.2 },
    ...(i % 3 === 0 ? { label: 'paraphrase', probabilities: { paraphrase: 0.9, not_paraphrase: 0.1 } } : {}),
    ...(i % 7 === 0 ? { span: { side: 'b', start: 0, end: `first part ${i}`.length } } : {}),
  };
});
const pairsFile = join(dir, 'pairs.jsonl');
writeFileSync(pairsFile, `${pairs.map((p) => JSON.stringify(p)).join('\n')}\n`);
const plan = parseSplitPlan('train=0.8,val=0.1,test=0.1') as SplitPlan;
const readJsonl = (path: string): ExportRow[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ExportRow);

t.test('split plans parse, and bad ones say why', async (t) => {
  t.same(parseSplitPlan('0.8,0.1,0.1'), { names: ['train', 'val', 'test'], fractions: [0.8, 0.1, 0.1] });
  t.match(parseSplitPlan('0.5,0.1'), /add up to 0.6/);
  t.match(parseSplitPlan('a=0.5,a=0.5'), /repeat/);
  t.match(parseSplitPlan('x=-1'), /bad split/);
});

t.test('grouped by paper: no paper on two sides; every pair exported once', async (t) => {
  // The CLI from dist/ (plain node: the Parquet writer loads there, see src/jobs/export.ts).
  if (!existsSync('dist/cli.js')) return t.fail('dist/cli.js missing: run scripts/setup');
  const out = join(dir, 'grouped');
  const stdout = execFileSync(
    process.execPath,
    [
      'dist/cli.js',
      'export',
      '--pairs',
      pairsFile,
      '--out',
      out,
      '--group-by',
      'paper',
      '--label',
      'paraphrase',
    ],
    { encoding: 'utf8' },
  );
  t.match(stdout, /^300 pairs exported/);
  const counts: Record<string, number> = Object.fromEntries(
    [...stdout.matchAll(/^ {2}(\w+): (\d+) pairs, (\d+) paper groups$/gm)].map((m) => [m[1], Number(m[2])]),
  );
  t.same(Object.keys(counts), ['train', 'val', 'test']);
  const s = { splits: Object.entries(counts).map(([name, pairs]) => ({ name, pairs })) };
  const rows = plan.names.flatMap((n) => readJsonl(join(out, `${n}.jsonl`)));
  t.equal(rows.length, 300);
  const sides = new Map<string, Set<string>>();
  for (const r of rows) {
    for (const g of r.groups?.paper ?? []) sides.set(g, (sides.get(g) ?? new Set()).add(r.split));
  }
  t.same(
    [...sides].filter(([, s]) => s.size > 1),
    [],
    'no paper in two splits',
  );
  const train = s.splits.find((x) => x.name === 'train')?.pairs ?? 0;
  t.ok(train >= 180 && train <= 280, `train holds about 80% (${train})`);
  t.ok(
    s.splits.every((x) => x.pairs > 0),
    'every split got pairs',
  );
  // Labels: the job's where it had one, --label elsewhere.
  t.ok(rows.every((r) => r.label === 'paraphrase'));
  // Sub-sentence pairs: s2 is the span, the whole sentence rides along.
  const spanRow = rows.find((r) => r.span !== undefined);
  t.equal(spanRow?.s2, spanRow?.span?.source.slice(spanRow.span.start, spanRow.span.end));
  t.match(spanRow?.s2, /^first part \d+$/);

  // Parquet: same rows, same splits.
  const file = await asyncBufferFromFile(join(out, 'train.parquet'));
  const prows = (await parquetReadObjects({ file })) as Array<Record<string, unknown>>;
  const jrows = readJsonl(join(out, 'train.jsonl'));
  t.equal(prows.length, jrows.length);
  t.same(
    prows.map((r) => [r.s1, r.s2, r.label, Number(r.s1_id), r.split]),
    jrows.map((r) => [r.s1, r.s2, r.label, r.s1_id, r.split]),
  );
});

t.test('ordered by date: every train pair is no later than any test pair', async (t) => {
  const out = join(dir, 'ordered');
  await exportDataset({
    source: { pairs: pairsFile },
    out,
    formats: ['jsonl'],
    split: plan,
    orderBy: 'date',
    label: 'paraphrase',
    seed: 1,
  });
  const time = (r: ExportRow) => {
    const p = pairs.find((x) => x.a.id === r.s1_id);
    return Date.parse(p?.a.meta.date as string);
  };
  const train = readJsonl(join(out, 'train.jsonl')).map(time);
  const test = readJsonl(join(out, 'test.jsonl')).map(time);
  t.ok(Math.max(...train) <= Math.min(...test), 'train before test');
  t.equal(train.length, 240);
});

t.test('pairs sharing a group with a test set are dropped', async (t) => {
  const testSet = join(dir, 'test-groups.txt');
  writeFileSync(testSet, 'P0\nP7\n');
  const out = join(dir, 'excluded');
  const s = await exportDataset({
    source: { pairs: pairsFile },
    out,
    formats: ['jsonl'],
    split: parseSplitPlan('1') as SplitPlan,
    excludeGroupsOf: testSet,
    excludeKey: 'paper',
    label: 'x',
    seed: 1,
  });
  const dropped = pairs.filter(
    (p) => ['P0', 'P7'].includes(p.a.meta.paper) || ['P0', 'P7'].includes(p.b.meta.paper),
  );
  t.equal(s.excluded, dropped.length);
  t.equal(s.pairs, 300 - dropped.length);
  const rows = readJsonl(join(out, 'train.jsonl'));
  t.notOk(rows.some((r) => dropped.some((d) => d.a.id === r.s1_id)));
});

t.test('bad inputs: no label, not a pair, missing order value', async (t) => {
  await t.rejects(
    exportDataset({
      source: { pairs: pairsFile },
      out: join(dir, 'x'),
      formats: ['jsonl'],
      split: plan,
      seed: 1,
    }),
    { code: 'BAD_INPUT', field: 'label' },
  );
  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, '{"a": 1}\n');
  await t.rejects(
    exportDataset({
      source: { pairs: bad },
      out: join(dir, 'y'),
      formats: ['jsonl'],
      split: plan,
      label: 'x',
      seed: 1,
    }),
    { code: 'BAD_FILE', message: /bad.jsonl:1: not a mined pair/ },
  );
  await t.rejects(
    exportDataset({
      source: { pairs: pairsFile },
      out: join(dir, 'z'),
      formats: ['jsonl'],
      split: plan,
      orderBy: 'year',
      label: 'x',
      seed: 1,
    }),
    { code: 'BAD_INPUT', field: 'orderBy' },
  );
});

/** pyarrow reads what hyparquet-writer wrote: the check the issue asks for, where a Python has pyarrow. */
const python = [process.env.PARAMINE_PYTHON, '.venv/bin/python', '/work/venv/bin/python', 'python3'].find(
  (p) => {
    if (p === undefined || (p.includes('/') && !existsSync(p))) return false;
    try {
      execFileSync(p, ['-c', 'import pyarrow'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  },
);
t.test(
  'pyarrow reads the Parquet files',
  { skip: python ? false : 'no Python with pyarrow here (pip install pyarrow)' },
  async (t) => {
    const path = join(dir, 'grouped', 'train.parquet');
    const script = [
      'import json, sys, pyarrow.parquet as pq',
      't = pq.read_table(sys.argv[1])',
      'print(json.dumps({"rows": t.num_rows, "columns": t.column_names, "types": [str(x) for x in t.schema.types], "first": t.slice(0, 1).to_pylist()[0]}, default=str))',
    ].join('\n');
    const r = JSON.parse(execFileSync(python as string, ['-c', script, path], { encoding: 'utf8' })) as {
      rows: number;
      columns: string[];
      types: string[];
      first: Record<string, unknown>;
    };
    const jrows = readJsonl(join(dir, 'grouped', 'train.jsonl'));
    t.equal(r.rows, jrows.length);
    t.same(r.columns.slice(0, 6), ['s1', 's2', 'label', 's1_id', 's2_id', 'cosine']);
    t.equal(r.types[3], 'int64');
    t.equal(r.first.s1, jrows[0]?.s1);
    t.equal(r.first.s1_id, jrows[0]?.s1_id);
  },
);

t.test('label and probability filters; an empty split is said, and refused with --strict', async (t) => {
  const only = await exportDataset({
    source: { pairs: pairsFile },
    out: join(dir, 'filtered'),
    formats: ['jsonl'],
    split: plan,
    label: 'unlabeled',
    keepLabels: ['paraphrase'],
    minProbability: 0.85,
    seed: 1,
  });
  t.equal(only.pairs, 100, 'only the reranked third (P 0.9) is kept');
  t.equal(only.filtered, 200);
  const none = await exportDataset({
    source: { pairs: pairsFile },
    out: join(dir, 'filtered-none'),
    formats: ['jsonl'],
    split: plan,
    label: 'unlabeled',
    minProbability: 0.95,
    seed: 1,
  });
  t.equal(none.pairs, 0, 'no pair reaches 0.95');

  // Every pair in one paper: the grouped split cannot fill val and test.
  const onePaper = join(dir, 'one-paper.jsonl');
  writeFileSync(
    onePaper,
    `${pairs
      .slice(0, 20)
      .map((p) =>
        JSON.stringify({ ...p, a: { ...p.a, meta: { paper: 'P1' } }, b: { ...p.b, meta: { paper: 'P1' } } }),
      )
      .join('\n')}\n`,
  );
  /** `paramine export` of the one-paper pairs, grouped by paper: its exit status and what it said on stderr. */
  const exportOnePaper = (extra: string[]) => {
    const r = spawnSync(
      process.execPath,
      [
        'dist/cli.js',
        'export',
        '--pairs',
        onePaper,
        '--out',
        join(dir, 'one'),
        '--group-by',
        'paper',
        '--label',
        'x',
        '--format',
        'jsonl',
        ...extra,
      ],
      { encoding: 'utf8' },
    );
    return { status: r.status, stderr: r.stderr };
  };
  const warned = exportOnePaper([]);
  t.equal(warned.status, 0);
  t.match(warned.stderr, /warning: split .*empty/, 'a warning names the empty splits');
  const strict = exportOnePaper(['--strict']);
  t.not(strict.status, 0, '--strict refuses');
  t.match(strict.stderr, /is empty/);
});

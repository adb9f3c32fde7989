/**
 * Group tables over a real small index: every sentence is in the groups of its metadata values (arrays:
 * several), the `term` key falls back to the definition tagger, ordered keys answer ranges, tables are
 * written at the end of the build or on an existing index, and a rebuilt index refuses stale tables.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { readManifest } from '../../src/index/index.js';
import { buildGroupTables, staleGroupTables } from '../../src/indexer/groups.js';
import { rebuildIndex } from '../../src/indexer/rebuild.js';
import { openService } from '../../src/service/index.js';
import {
  forEachGroup,
  GROUPS_DIR,
  GroupTables,
  type GroupValue,
  groupTableIdentity,
  parseGroupKeySpec,
  SentenceStore,
  withAdded,
} from '../../src/store/index.js';
import { Turns } from '../../src/turns.js';
import { buildGroupedIndex, syntheticSentence } from '../helpers/corpus.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-groups-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const N = 120;
const rows = Array.from({ length: N }, (_, i) => {
  const definition =
    i % 10 === 0
      ? `In this work, ${i % 20 === 0 ? 'Coherence' : 'a gold pair'} is defined as item ${i}.`
      : undefined;
  return {
    text: definition ?? syntheticSentence(i),
    paper: `P${i % 7}`,
    ...(i % 5 === 0 ? { cites: [`C${i % 3}`, `C${(i + 1) % 3}`] } : {}),
    date: new Date(Date.UTC(2024, 0, 1 + (i % 30))).toISOString().slice(0, 10),
  };
});
const index = await buildGroupedIndex(dir, rows, ['paper', 'cites', 'term', 'date:date']);
const manifest = await readManifest(index);
const store = SentenceStore.open(join(index, 'store'), { readOnly: true });
const records = [...store.range(0, manifest.ntotal)];
await store.close();

t.test('the build wrote a table per key; members are exactly the sentences with the value', async (t) => {
  const tables = GroupTables.open(join(index, GROUPS_DIR), groupTableIdentity(manifest));
  if (!tables) throw new Error('no group tables');
  t.teardown(() => tables.close());
  t.same(
    tables
      .list()
      .map((i) => i.key)
      .sort(),
    ['cites', 'date', 'paper', 'term'],
  );
  const paper = tables.require('paper', 'withinGroup');
  t.equal(paper.groups, 7);
  t.equal(paper.sentences, manifest.ntotal);
  for (let p = 0; p < 7; p++) {
    const expected = records.filter((r) => r.record.meta?.paper === `P${p}`).map((r) => r.id);
    t.same(tables.ids('paper', `P${p}`), expected, `P${p}`);
    t.equal(tables.count('paper', `P${p}`), expected.length);
  }
  // Array values: a sentence citing C0 and C1 is in both groups.
  const c0 = tables.ids('cites', 'C0');
  t.same(
    c0,
    records.filter((r) => (r.record.meta?.cites as string[] | undefined)?.includes('C0')).map((r) => r.id),
  );
  t.equal(tables.require('cites', 'x').members, 2 * tables.require('cites', 'x').sentences);
  t.same(
    [...tables.groups('paper')].map((g) => g.value),
    ['P0', 'P1', 'P2', 'P3', 'P4', 'P5', 'P6'],
  );
  t.same(
    [...tables.groups('paper', 'P4')].map((g) => g.value),
    ['P5', 'P6'],
    'groups after a value',
  );
});

t.test('forEachGroup: every group once, in order, its cursor cut and taken again at each turn', async (t) => {
  const tables = GroupTables.open(join(index, GROUPS_DIR), groupTableIdentity(manifest));
  if (!tables) throw new Error('no group tables');
  t.teardown(() => tables.close());
  // Added sentences: a group of built ones grows, and a group of added ones only comes after the built ones.
  const added = [
    { id: N, record: { text: 'an added one', meta: { paper: 'P3' } } },
    { id: N + 1, record: { text: 'another', meta: { paper: 'P9' } } },
  ];
  for (const view of [tables, withAdded(tables, added)]) {
    const all = [...view.groups('paper')];
    for (const ms of [0, 60_000]) {
      const seen: Array<{ value: GroupValue; count: number }> = [];
      let turned = false;
      const other = setImmediate(() => {
        turned = true;
      });
      await forEachGroup(view, 'paper', (g) => seen.push(g), new Turns(ms));
      clearImmediate(other);
      t.same(seen, all, `${all.length} groups, in order (a turn owed after ${ms} ms)`);
      t.equal(
        turned,
        ms === 0,
        ms === 0 ? 'owed a turn at each group: the loop ran' : 'owed none: none taken',
      );
    }
  }
  t.same(
    [...withAdded(tables, added).groups('paper')].map((g) => g.value),
    ['P0', 'P1', 'P2', 'P3', 'P4', 'P5', 'P6', 'P9'],
    'a group of added sentences only, last',
  );
});

t.test('term: the definition tagger makes groups on a plain corpus', async (t) => {
  const tables = GroupTables.open(join(index, GROUPS_DIR), groupTableIdentity(manifest));
  if (!tables) throw new Error('no group tables');
  t.teardown(() => tables.close());
  const info = tables.require('term', 'withinGroup');
  t.match(info.tagger, /^definitions@\d+$/);
  t.same(
    [...tables.groups('term')].map((g) => [g.value, g.count]),
    [
      ['coherence', 6],
      ['gold pair', 6],
    ],
  );
  for (const id of tables.ids('term', 'coherence')) t.match(records[id]?.record.text, /Coherence is defined/);
});

t.test('ordered keys answer value ranges; unordered ones refuse windows', async (t) => {
  const tables = GroupTables.open(join(index, GROUPS_DIR), groupTableIdentity(manifest));
  if (!tables) throw new Error('no group tables');
  t.teardown(() => tables.close());
  t.equal(tables.require('date', 'window.key', true).order, 'date');
  const lo = Date.UTC(2024, 0, 3);
  const hi = Date.UTC(2024, 0, 5);
  const got = tables.between('date', lo, hi);
  const expected = records.filter((r) => {
    const d = Date.parse(r.record.meta?.date as string);
    return d >= lo && d <= hi;
  });
  t.equal(got.length, expected.length);
  t.same(new Set(got.map((e) => e.id)), new Set(expected.map((r) => r.id)));
  t.ok(
    got.every((e, i) => i === 0 || e.value >= (got[i - 1] as { value: number }).value),
    'in value order',
  );
  t.throws(() => tables.require('paper', 'window.key', true), { code: 'BAD_INPUT', field: 'window.key' });
  t.throws(() => tables.require('section', 'withinGroup'), {
    code: 'BAD_INPUT',
    field: 'withinGroup',
    message: /no group table for "section".*paramine groups build/,
  });
});

t.test(
  'groups build on an existing index replaces a table; another build of the index is refused',
  async (t) => {
    const [info] = await buildGroupTables(index, [parseGroupKeySpec('paper')], { quiet: true });
    t.equal(info?.groups, 7);
    const stale = GroupTables.open(join(index, GROUPS_DIR), 'another-build');
    t.teardown(() => stale?.close());
    t.throws(() => stale?.require('paper', 'withinGroup'), { code: 'CONFLICT' });
    t.throws(() => parseGroupKeySpec('date:weekly'), { code: 'BAD_INPUT' });
  },
);

t.test(
  'index --rebuild builds the tables again: added sentences are members, deleted ones are not',
  async (t) => {
    const service = await openService({ index, reranker: false });
    const [a, b] = await service.writes.add([
      { text: 'An added sentence of a new paper.', meta: { paper: 'P-new', date: '2024-02-15' } },
      { text: 'Another added sentence, of paper three.', meta: { paper: 'P3' } },
    ]);
    await service.writes.delete([0]);
    await service.close();
    t.equal(rows[0]?.paper, 'P0');
    const r = await rebuildIndex(index);
    t.same([...r.regrouped].sort(), ['cites', 'date', 'paper', 'term']);
    const m = await readManifest(index);
    const tables = GroupTables.open(join(index, GROUPS_DIR), groupTableIdentity(m));
    if (!tables) throw new Error('no group tables');
    t.teardown(() => tables.close());
    t.same(tables.ids('paper', 'P-new'), [a?.id], 'an added sentence is a member of its group');
    t.ok(tables.ids('paper', 'P3').includes(b?.id as number));
    t.notOk(tables.ids('paper', 'P0').includes(0), 'a deleted sentence is in no group');
    t.ok(
      tables.between('date', Date.UTC(2024, 1, 15), Date.UTC(2024, 1, 15)).some((e) => e.id === a?.id),
      'ordered keys too',
    );
    t.same(await staleGroupTables(index), [], 'nothing stale after the rebuild');
  },
);

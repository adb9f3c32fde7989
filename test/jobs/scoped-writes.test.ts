/**
 * Scoped mining over an index that took writes (issue #30), a real service (all-MiniLM-L6-v2, FAISS, LMDB,
 * group tables on `version`): sentences added with metadata are members of their groups, so a withinGroup
 * job pairs an added near-copy with its verse when they share a version and never across versions, an
 * all-new group is mined too, and `since` with withinGroup returns exactly the full re-mine's pairs that
 * involve an added sentence.
 */
import t from 'tap';
import { parseGroupKeySpec } from '../../src/store/index.js';
import { startTestService } from '../helpers/service.js';

const s = await startTestService(300, false, {}, { groupKeys: [parseGroupKeySpec('version')] });
t.teardown(() => s.close());
const base = s.service.store.count;
const key = (a: number, b: number) => (a < b ? `${a}-${b}` : `${b}-${a}`);
const versionOf = (id: number) => s.service.store.get(id)?.meta?.version;

async function pairsOf(spec: Record<string, unknown>): Promise<Map<string, number>> {
  const job = await s.jobs.wait((await s.jobs.create(spec)).id);
  t.equal(job.state, 'done', JSON.stringify(job.error ?? {}));
  const pairs = new Map<string, number>();
  for (const { pair } of s.jobStore.pairs(job.id))
    pairs.set(key(pair.a.id as number, pair.b.id as number), pair.cosine);
  return pairs;
}

t.test('withinGroup and since over added sentences', async (t) => {
  const verses = Array.from({ length: 12 }, (_, i) => i * 11 + 2);
  const records = await s.service.store.getMany(verses);
  const other = (v: unknown) => (v === 'WEB' ? 'KJV' : 'WEB');
  const added = await s.service.writes.add([
    // Near-copies of built verses: the first six in their verse's version, the other six in the other one.
    ...records.map((r, i) => ({
      text: `${r?.text.replace(/[.;:,]$/, '')}, so it is written.`,
      meta: { version: i < 6 ? r?.meta?.version : other(r?.meta?.version), ref: 'added' },
    })),
    // A version the build never had: three pairs of near-duplicates.
    ...[
      'The harbour bridge reopened after repairs',
      'A storm closed the mountain pass',
      'The library extended its hours',
    ].flatMap((text) => [
      { text: `${text}.`, meta: { version: 'NEW' } },
      { text: `${text} this week.`, meta: { version: 'NEW' } },
    ]),
  ]);
  t.ok(added.every((a) => a.status === 'added'));
  const spec = { k: 5, minCosine: 0.5, withinGroup: 'version' };
  const full = await pairsOf(spec);
  for (const k of full.keys()) {
    const [a, b] = k.split('-').map(Number) as [number, number];
    if (versionOf(a) !== versionOf(b)) t.fail(`pair ${k} crosses versions`);
  }
  records.forEach((_, i) => {
    const pair = key(verses[i] as number, added[i]?.id as number);
    if (i < 6) t.ok(full.has(pair), `added near-copy ${i} pairs with its verse (same version)`);
    else t.notOk(full.has(pair), `added near-copy ${i} in the other version does not`);
  });
  for (let p = 0; p < 3; p++) {
    const a = added[12 + 2 * p]?.id as number;
    t.ok(full.has(key(a, a + 1)), `the new version's pair ${p} is mined`);
  }
  const expected = [...full.keys()].filter((k) => k.split('-').some((id) => Number(id) >= base)).sort();
  const since = await pairsOf({ ...spec, since: { id: base } });
  t.same([...since.keys()].sort(), expected, 'since + withinGroup: exactly the new pairs of the re-mine');
  const shallow = await pairsOf({ ...spec, since: { id: base }, reverseDepth: 5 });
  t.same([...shallow.keys()].sort(), expected, 'from reverseDepth 5 too');
});

/**
 * The compressed gram rows (issue #53, memory at 10^6 documents): every row reads back exactly as added,
 * whatever its gaps (adjacent buckets, the whole 2^22 range) and counts (1, 2, the 10-bit cap), and dot()
 * equals the sum over the decoded entries; rows cross storage chunks intact.
 */
import t from 'tap';
import { GramRows } from '../../src/jobs/align-gram-rows.js';

const COUNT_BITS = 10;
const BUCKETS = 1 << 22;

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A sorted row of `n` distinct buckets with counts drawn from 1, 2, a few and the cap. */
function row(rand: () => number, n: number): Uint32Array {
  const buckets = new Set<number>();
  if (n > 0) buckets.add(rand() < 0.5 ? 0 : BUCKETS - 1);
  while (buckets.size < n) {
    const b = Math.floor(rand() * BUCKETS);
    buckets.add(b);
    if (buckets.size < n && b + 1 < BUCKETS) buckets.add(b + 1);
  }
  const counts = [1, 1, 1, 2, 3, 130, 1023];
  return Uint32Array.from(
    [...buckets].sort((a, b) => a - b),
    (b) => {
      const c = counts[Math.floor(rand() * counts.length)] as number;
      return ((b << COUNT_BITS) | c) >>> 0;
    },
  );
}

t.test('rows decode exactly, and dot() is the decoded rows dotted with the table', async (t) => {
  const rand = seeded(7);
  const rows = new GramRows(COUNT_BITS);
  const added: Uint32Array[] = [];
  for (const n of [0, 1, 2, 650, 5000, 1, 40_000]) {
    const r = row(rand, n);
    added.push(r);
    rows.add(r);
  }
  t.equal(rows.count, added.length);
  t.equal(rows.longest, 40_000);
  const table = Float32Array.from({ length: BUCKETS }, () => rand());
  const present = new Int32Array(BUCKETS >>> 5).fill(-1);
  const into = new Uint32Array(rows.longest);
  let exact = 0;
  let dots = 0;
  added.forEach((r, i) => {
    const n = rows.decode(i, into);
    if (n === r.length && into.subarray(0, n).every((e, x) => e === r[x])) exact++;
    let want = 0;
    for (const e of r) want += (e & ((1 << COUNT_BITS) - 1)) * (table[e >>> COUNT_BITS] as number);
    if (Math.abs(rows.dot(i, table, present) - want) <= 1e-6 * Math.max(1, Math.abs(want))) dots++;
  });
  t.equal(exact, added.length, 'every row reads back as added');
  t.equal(dots, added.length, 'dot() equals the decoded sum');
});

t.test('rows across storage chunks read back intact, in fewer bytes than 4 an entry', async (t) => {
  const rand = seeded(11);
  const rows = new GramRows(COUNT_BITS, 2 ** 20);
  const kept: Array<[number, Uint32Array]> = [];
  let entries = 0;
  // 3,000 rows of 650-1,200 entries: ~5 MB at ~2.4 bytes an entry, in chunks of 1 MB.
  for (let i = 0; i < 3_000; i++) {
    const r = row(rand, i % 10 === 0 ? 1200 : 650);
    entries += r.length;
    if (i % 97 === 0 || i > 2_990) kept.push([i, r]);
    rows.add(r);
  }
  const size = rows.size;
  t.equal(size.entries, entries);
  t.ok(size.allocated > 4 * 2 ** 20, 'several chunks');
  t.ok(size.bytes < 3 * entries, `${size.bytes} bytes for ${entries} entries`);
  const into = new Uint32Array(rows.longest);
  const intact = kept.filter(([i, r]) => {
    const n = rows.decode(i, into);
    return n === r.length && into.subarray(0, n).every((e, x) => e === r[x]);
  });
  t.equal(intact.length, kept.length);
});

t.test('an empty first row is kept (no chunk yet)', async (t) => {
  const rows = new GramRows(COUNT_BITS);
  rows.add(new Uint32Array(0));
  rows.add(Uint32Array.of((5 << COUNT_BITS) | 1));
  const into = new Uint32Array(1);
  t.equal(rows.decode(0, into), 0);
  t.equal(rows.decode(1, into), 1);
  t.equal(into[0], (5 << COUNT_BITS) | 1);
});

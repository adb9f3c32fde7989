/**
 * One writer of an index's structure (issue #51; src/store/index-lock.ts), with real CLI processes: a
 * compaction is refused while another process has the index open, naming it; while a compaction runs, a
 * second one and an open are refused, naming it; a seal finding the structure lock taken leaves its
 * sentences growing and seals them once it is free.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { rewriteLock, sealLock } from '../../src/store/index.js';
import { ADDED, open, smallIndexWithWrites } from '../helpers/small-index.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-structure-lock-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const index = await smallIndexWithWrites(dir);

const compact = () =>
  spawnSync(process.execPath, ['dist/cli.js', 'index', '--compact', index], { encoding: 'utf8' });

t.test('a compaction is refused while another process has the index open', async (t) => {
  const s = await open(index);
  const r = compact();
  await s.close();
  t.not(r.status, 0, 'refused');
  t.match(r.stderr, new RegExp(`LOCKED.*open in process ${process.pid} \\(since`), r.stderr);
  t.match(r.stderr, /stop it first/, 'says what to do');
  t.same(
    readdirSync(index).filter((f) => f.startsWith('IN-USE.')),
    [],
    'the closed service left no mark',
  );
});

t.test('while a compaction runs, a second one and an open are refused, naming it', async (t) => {
  const lock = rewriteLock(index, 'index --compact');
  try {
    const r = compact();
    t.not(r.status, 0, 'a second compaction is refused');
    t.match(
      r.stderr,
      new RegExp(`LOCKED.*process ${process.pid} \\(index --compact, since.*wait for it to end`),
    );
    await t.rejects(open(index), {
      code: 'LOCKED',
      message: new RegExp(`being rewritten by process ${process.pid} \\(\`index --compact\``),
    });
  } finally {
    lock.release();
  }
  const r = compact();
  t.equal(r.status, 0, `free again: the compaction runs\n${r.stderr}`);
  t.match(r.stdout, /compacted/);
});

t.test('a seal waits for the structure lock; its sentences stay growing meanwhile', async (t) => {
  const s = await open(index);
  t.teardown(() => s.close());
  await s.writes.add(ADDED.slice(0, 3).map((text) => ({ text: `${text} again, later` })));
  const grown = s.writes.stats.growing;
  t.ok(grown >= 3, `growing: ${grown}`);
  const held = sealLock(index);
  t.ok(held, 'the structure lock taken (another sealer)');
  t.equal(await s.writes.seal(), 0, 'nothing sealed while it is held');
  t.equal(s.writes.stats.growing, grown, 'the sentences still growing, searchable');
  held?.release();
  t.equal(await s.writes.seal(), grown, 'sealed once it is free');
  t.equal(s.writes.stats.growing, 0);
});

/**
 * Processes sharing one index's stores (issue #51's compaction fault; its cause found 2026-12-03), against
 * two bugs in the LMDB that lmdb-js vendors, both fixed by scripts/build-lmdb:
 * - A process that opens an environment set the writers' transaction id back to the meta page it read
 *   (LMDB ITS#9496): a commit another process made in that moment was lost, and that process's next write
 *   started from before it, so an add got the id the lost one had. Here one process adds (as `paramine
 *   serve` does) while two others open and close the same updates, read-only (as `export` and `tune` do)
 *   and to write (as `add` and `index --compact` do). With the prebuilt binary (PREBUILDS_ONLY=1) this gave
 *   ids twice 14 and 22 times in two runs, and crashed an opener in a third.
 * - The last process to close an environment destroyed its mutexes under one opening it at that moment,
 *   whose every transaction then failed with EINVAL. Here two processes open and close updates nobody else
 *   holds open; with the prebuilt binary both failed within seconds, in each of several runs.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { lmdbFixed } from '../../src/store/index.js';

/** How long each other process opens and closes the updates, while the writer goes on. */
const OPEN_MS = 10_000;
const dir = mkdtempSync(join(tmpdir(), 'paramine-lmdb-race-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** A fixture run as its own process: its stdout's lines as they come, and its end. */
function run(script: string, args: string[]) {
  const child = spawn(process.execPath, [...process.execArgv, `test/fixtures/lmdb-race/${script}`, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const lines: Array<(line: string) => void> = [];
  child.stdout.on('data', (d: Buffer) => {
    out += d;
    for (const l of String(d).split('\n')) if (l) for (const f of lines) f(l);
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d;
  });
  const done = new Promise<{ code: number | null; last: string; err: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, last: out.trim().split('\n').at(-1) ?? '', err })),
  );
  const line = (want: string) => new Promise<void>((resolve) => lines.push((l) => l === want && resolve()));
  return { done, line, stop: () => child.stdin.end() };
}

/**
 * Two processes open and close the updates for `ms`, read-only and to write: each ends well, having
 * opened often.
 */
async function openAndClose(t: Test, ms: number): Promise<void> {
  const openers = ['read-only', 'read-write'].map((how) => run('opener.ts', [dir, String(ms), how]));
  for (const o of await Promise.all(openers.map((o) => o.done))) {
    t.equal(o.code, 0, o.err);
    t.ok((JSON.parse(o.last) as { opens: number }).opens > 100, `opened and closed: ${o.last}`);
  }
}

t.ok(lmdbFixed(), 'lmdb-js runs the binary scripts/build-lmdb built from the patched source');

t.test('adds keep one id each while other processes open the same updates', async (t) => {
  const writer = run('writer.ts', [dir]);
  // The writer holds the environment open throughout, as a serving process does (it exists before the
  // others open it: two processes creating one at the same moment are not covered).
  await writer.line('ready');
  await openAndClose(t, OPEN_MS);
  writer.stop();
  const w = await writer.done;
  t.equal(w.code, 0, w.err);
  const r = JSON.parse(w.last) as { adds: number; twice: number; gone: number };
  t.ok(r.adds > 500, `${r.adds} adds`);
  t.equal(r.twice, 0, 'no id was given twice');
  t.equal(r.gone, 0, 'every acknowledged text is stored under its id');
});

t.test('processes opening and closing updates nobody else holds open all keep working', (t) =>
  openAndClose(t, OPEN_MS / 2),
);

/**
 * `paramine index --compact` SIGKILLed at moments spread over its run (issue #51, the crash test extended
 * past sealing): after each kill the index opens (a run cut short is finished at the open, under the rewrite
 * lock) and holds every acknowledged write: the added sentences under their ids, the deleted ones gone, the
 * files passing their checksums, and its answers those of the index before the compaction or after an
 * uninterrupted one, nothing in between. A compaction run again then ends as the uninterrupted one did.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { readManifest } from '../../src/index/index.js';
import type { Service } from '../../src/service/index.js';
import { ADDED, BASE, DELETED, open, smallIndexWithWrites, tops } from '../helpers/small-index.js';

const KILLS = 4;
const dir = mkdtempSync(join(tmpdir(), 'paramine-compact-crash-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const original = await smallIndexWithWrites(dir);

async function answers(index: string): Promise<number[][]> {
  const s = await open(index, { verify: 'full' });
  try {
    return await tops(s);
  } finally {
    await s.close();
  }
}

/** Every acknowledged write is there: added texts under their ids, deleted ids in no answer. */
function writesKept(t: Test, s: Service, top: number[][]): void {
  const lost = ADDED.filter((text, i) => !DELETED.includes(BASE + i) && s.store.get(BASE + i)?.text !== text);
  t.same(lost, [], 'every added sentence stored under its id');
  t.notOk(
    top.some((ids) => ids.some((id) => DELETED.includes(id))),
    'no deleted id in any answer',
  );
}

/** A compaction as a child: when each progress line came (ms from the start) and when it ended. */
function run(index: string, kill?: { line: number; ms: number }) {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['dist/cli.js', 'index', '--compact', index], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines: number[] = [];
  let err = '';
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
    while (lines.length < err.split('\n').length - 1) {
      lines.push(performance.now() - t0);
      if (kill && lines.length === kill.line) setTimeout(() => child.kill('SIGKILL'), kill.ms);
    }
  });
  if (kill?.line === 0) setTimeout(() => child.kill('SIGKILL'), kill.ms);
  return new Promise<{ code: number | null; lines: number[]; ms: number; err: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, lines, ms: performance.now() - t0, err })),
  );
}

const before = await answers(original);
const reference = join(dir, 'reference');
cpSync(original, reference, { recursive: true });
const ref = await run(reference);
if (ref.code !== 0) throw new Error(`the reference compaction failed: ${ref.err}`);
const after = await answers(reference);
/**
 * Where kills land: after the start or after a progress line, at a random point before the next event
 * (the reference's timing); half of them in the last stretch (after the last line), the move and the folds a crash must not tear.
 */
const spans = [0, ...ref.lines].map((at, line) => ({
  line,
  span: 0.9 * (([...ref.lines, ref.ms][line] ?? ref.ms) - at),
}));
const last = spans.length - 1;
const anchors = [last, last - 1, last, 0].map((i) => spans[Math.max(0, i)] as (typeof spans)[0]);

t.test(
  `index --compact SIGKILLed ${KILLS} times: every open keeps the writes and answers as before or after`,
  async (t) => {
    let compacted = 0;
    let landed = 0;
    for (let k = 0; k < KILLS; k++) {
      const index = join(dir, `kill-${k}`);
      cpSync(original, index, { recursive: true });
      const { line, span } = anchors[k % anchors.length] as { line: number; span: number };
      const ms = Math.random() * span;
      const killed = await run(index, { line, ms });
      landed += killed.code === null ? 1 : 0;
      const ended = killed.code === 0 ? ' (it had ended)' : '';
      t.comment(`kill ${k}: ${ms.toFixed(0)} ms after progress line ${line}${ended}`);

      const s = await open(index, { verify: 'full' });
      const top = await tops(s);
      const done = (await readManifest(index)).build.rebuild !== undefined;
      compacted += done ? 1 : 0;
      writesKept(t, s, top);
      await s.close();
      t.same(top, done ? after : before, `answers as ${done ? 'after' : 'before'} the compaction`);

      const again = await run(index);
      t.equal(again.code, 0, `compacted again after kill ${k}\n${again.err}`);
      t.same(await answers(index), after, 'then as the uninterrupted compaction');
    }
    t.ok(landed >= KILLS - 2, `${landed} of ${KILLS} kills landed before the compaction ended`);
    t.ok(compacted > 0, `${compacted} of ${KILLS} opens found a compaction done or finished it`);
    t.comment(
      `reference run ${ref.ms.toFixed(0)} ms, progress lines at ${ref.lines.map((x) => x.toFixed(0)).join(', ')} ms`,
    );
  },
);

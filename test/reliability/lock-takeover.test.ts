/**
 * A stale lock (its owner was SIGKILLed) raced for by 6 processes released in the same millisecond: exactly
 * one takes the directory, the others are refused LOCKED naming it, every time (8 rounds). Before the
 * takeover guard, 2 to 4 of 6 won in most rounds. The winner holds the lock until every racer has answered
 * (a winner that let go after 1.5 s let a racer started late on a slow CI machine win after it).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { LOCK_FILE } from '../../src/store/lock.js';

const root = mkdtempSync(join(tmpdir(), 'paramine-lock-race-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));
const RACERS = 6;

/** A racer's answer (its first line), and a release that closes its stdin and waits for it to exit. */
function racer(dir: string, at: number): { answer: Promise<string>; release: () => Promise<void> } {
  const child = spawn(process.execPath, [...process.execArgv, 'test/helpers/lock-racer.ts', dir, String(at)]);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let out = '';
  const answer = new Promise<string>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    exited.then(() => resolve(out.trim()));
  });
  return {
    answer,
    release: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

t.test('of six processes racing for a stale lock, exactly one wins, every round', async (t) => {
  for (let round = 0; round < 8; round++) {
    const d = mkdtempSync(join(root, `r${round}-`));
    const stale = { pid: 999_999, host: hostname(), boot: 'another boot', start: '1', since: 'then' };
    writeFileSync(join(d, LOCK_FILE), JSON.stringify(stale));
    // The loader takes a while to start each child: released together well after the last is up.
    const at = Date.now() + 4000;
    const racers = Array.from({ length: RACERS }, () => racer(d, at));
    // The winner keeps the lock until all have answered: one that started late must meet it, not win after it.
    const outs = await Promise.all(racers.map((r) => r.answer));
    await Promise.all(racers.map((r) => r.release()));
    const won = outs.filter((o) => o === 'won').length;
    t.equal(won, 1, `round ${round}: ${outs.join(', ')}`);
    t.equal(outs.filter((o) => o === 'lost LOCKED').length, RACERS - 1, 'the rest are told LOCKED');
  }
});

/**
 * A stale lock (its owner was SIGKILLed) raced for by 6 processes released in the same millisecond: exactly
 * one takes the directory, the others are refused LOCKED naming it, every time (8 rounds). Before the
 * takeover guard, 2 to 4 of 6 won in most rounds.
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

function racer(dir: string, at: number): Promise<string> {
  const child = spawn(process.execPath, [...process.execArgv, 'test/helpers/lock-racer.ts', dir, String(at)]);
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((resolve) => child.on('exit', () => resolve(out.trim())));
}

t.test('of six processes racing for a stale lock, exactly one wins, every round', async (t) => {
  for (let round = 0; round < 8; round++) {
    const d = mkdtempSync(join(root, `r${round}-`));
    const stale = { pid: 999_999, host: hostname(), boot: 'another boot', start: '1', since: 'then' };
    writeFileSync(join(d, LOCK_FILE), JSON.stringify(stale));
    // The loader takes a while to start each child: released together well after the last is up.
    const at = Date.now() + 4000;
    const outs = await Promise.all(Array.from({ length: RACERS }, () => racer(d, at)));
    const won = outs.filter((o) => o === 'won').length;
    t.equal(won, 1, `round ${round}: ${outs.join(', ')}`);
    t.equal(outs.filter((o) => o === 'lost LOCKED').length, RACERS - 1, 'the rest are told LOCKED');
  }
});

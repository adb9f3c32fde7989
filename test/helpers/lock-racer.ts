/**
 * A process that races for a directory's lock at an agreed time (lock-takeover.test.ts): prints won or lost.
 * The winner holds the lock until its stdin closes (the test closes it once every racer has answered), so a
 * racer that a slow machine starts late still meets a live owner instead of a released lock.
 */
import { DirLock } from '../../src/store/lock.js';

const [dir, at] = process.argv.slice(2) as [string, string];
while (Date.now() < Number(at)) {
  // spin: every racer starts in the same millisecond
}
try {
  const lock = DirLock.acquire(dir, 'the test directory');
  process.stdout.write('won\n');
  await new Promise((r) => {
    process.stdin.on('end', r);
    process.stdin.resume();
  });
  lock.release();
} catch (e) {
  process.stdout.write(`lost ${(e as { code?: string }).code}\n`);
}

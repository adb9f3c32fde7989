/** A process that races for a directory's lock at an agreed time (lock-takeover.test.ts): prints won or lost. */
import { DirLock } from '../../src/store/lock.js';

const [dir, at] = process.argv.slice(2) as [string, string];
while (Date.now() < Number(at)) {
  // spin: every racer starts in the same millisecond
}
try {
  const lock = DirLock.acquire(dir, 'the test directory');
  process.stdout.write('won\n');
  await new Promise((r) => setTimeout(r, 1500));
  lock.release();
} catch (e) {
  process.stdout.write(`lost ${(e as { code?: string }).code}\n`);
}

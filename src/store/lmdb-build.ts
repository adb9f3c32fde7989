/**
 * Whether this process runs lmdb-js built with paramine's two fixes to its LMDB (scripts/build-lmdb, run
 * by the set-up and the image's build). The prebuilt binary lmdb-js ships lets a process that opens an
 * environment set the writers' transaction id back to the meta page it read (LMDB ITS#9496): a commit
 * another process made in that moment is lost, and the next write starts from before it (an add's id
 * given twice; found under `index --compact` beside `paramine serve`, docs/updates.md). And the last
 * process to close an environment destroys its mutexes under one opening it at that moment (EINVAL on its
 * every transaction). lmdb-js loads build/Release first.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** A line scripts/build-lmdb's patch puts into LMDB's source (its last fix). */
const FIX_MARK = 'paramine fix 2 of 2';

/** lmdb-js's package directory. */
function lmdbRoot(): string {
  let dir = dirname(createRequire(import.meta.url).resolve('lmdb'));
  while (!existsSync(join(dir, 'binding.gyp')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** Whether the binary loaded is the one built from the patched source; looked at once (it cannot change). */
let fixed: boolean | undefined;

/** True when the loaded binary is the one built from the patched source. */
export function lmdbFixed(): boolean {
  fixed ??= builtWithFix();
  return fixed;
}

function builtWithFix(): boolean {
  // node-gyp-build's switch: with it set, the prebuilt binary loads whatever was built.
  if (process.env.PREBUILDS_ONLY) return false;
  const root = lmdbRoot();
  const source = join(root, 'dependencies/lmdb/libraries/liblmdb/mdb.c');
  return (
    existsSync(join(root, 'build/Release/lmdb.node')) &&
    existsSync(source) &&
    readFileSync(source, 'utf8').includes(FIX_MARK)
  );
}

let warned = false;

/** Warns once per process that writes to an index when its lmdb-js lacks the fix. */
export function warnIfLmdbUnfixed(): void {
  if (warned || lmdbFixed()) return;
  warned = true;
  process.emitWarning(
    'lmdb-js runs its prebuilt binary, which can lose a write when another process opens the same index ' +
      'meanwhile (LMDB ITS#9496): run `bash scripts/build-lmdb` (the set-up does) to build it with the fix',
    { code: 'PARAMINE_LMDB_UNFIXED' },
  );
}

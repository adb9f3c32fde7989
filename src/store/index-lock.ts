/**
 * Who may change an index's structure, and who has it open. A compaction or rebuild writes the new shards
 * beside the old ones and moves them in (manifest last), then folds the store and the updates; a seal
 * writes a segment's files and then records them. Two of these at once lose writes, and so would a process
 * that keeps serving the old shards and sealing after them. So:
 * - STRUCTURE.lock (a DirLock): held by `index --compact` / `--rebuild` for their whole run and by a seal,
 *   or the start-up sweep of a cut-short seal's files, for theirs. A second structural command is refused
 *   LOCKED naming the holder; a seal that finds it held leaves its sentences growing and tries again later.
 * - IN-USE.<pid>.<tag>: one per process that has the index open (serve, add, delete, mine). A serving
 *   process marks itself `follows`: it keeps answering and taking writes while a compaction or rebuild runs
 *   (its writes land after the rewrite's last id; it seals nothing meanwhile) and takes up the new shards
 *   once the rewrite has released this lock (service/generation.ts). A rewrite is refused while a process
 *   that does not follow is alive (and beside a follower where lmdb-js lacks the ITS#9496 fix), naming it;
 *   opening is refused while one runs.
 * Each side writes its own mark before it looks for the other's, so of two that race one always sees the
 * other. Files of dead processes (pid, boot and start time, as DirLock judges them) do not count.
 */
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ParamineError } from '../errors.js';
import { lmdbFixed } from './lmdb-build.js';
import { alive, DirLock, type Owner, readOwner } from './lock.js';

export const STRUCTURE_LOCK = 'STRUCTURE.lock';
const USE_PREFIX = 'IN-USE.';
/** The purposes that rewrite the whole index (a seal only adds files beside it). */
const REWRITES = ['index --compact', 'index --rebuild'];

/** Live processes with the index open, other than this one; marks of dead ones are removed. */
function users(dir: string): Owner[] {
  const found: Owner[] = [];
  for (const f of readdirSync(dir)) {
    if (!f.startsWith(USE_PREFIX)) continue;
    const owner = readOwner(join(dir, f));
    if (owner === undefined) continue; // being written: its process looks for our lock next
    if (!alive(owner)) rmSync(join(dir, f), { force: true });
    else if (owner.pid !== process.pid) found.push(owner);
  }
  return found;
}

/**
 * Whether a serving process may follow a compaction or rebuild run beside it: only where lmdb-js has LMDB's
 * ITS#9496 fix (store/lmdb-build.ts). Without it, the rewrite opening the index's stores while the service
 * commits an add can lose that add's commit, and the next add takes its id (found in 1 of ~40 runs of
 * test/reliability/compact-online.test.ts; docs/updates.md).
 */
export function followedRewrites(): boolean {
  return lmdbFixed();
}

/**
 * The structure lock for a command that rewrites the index (`index --compact`, `index --rebuild`), or LOCKED
 * naming the process that holds it or has the index open.
 */
export function rewriteLock(dir: string, purpose: 'index --compact' | 'index --rebuild'): DirLock {
  const lock = DirLock.acquire(dir, 'index', {
    file: STRUCTURE_LOCK,
    purpose,
    advice: 'wait for it to end',
  });
  const online = followedRewrites();
  const open = users(dir).filter((o) => o.follows !== true || !online);
  if (open.length > 0) {
    lock.release();
    const who = open.map((o) => `${o.pid} (since ${o.since})`).join(', ');
    const why = open.some((o) => o.follows === true)
      ? '; beside `paramine serve` it needs lmdb-js built with the fix for LMDB ITS#9496 (bash scripts/build-lmdb)'
      : '';
    throw new ParamineError(
      'LOCKED',
      `index ${dir} is open in process ${who}; stop it first (\`${purpose}\` rewrites the files it serves)${why}`,
      { field: dir },
    );
  }
  return lock;
}

/** Whether a compaction or rebuild of the index runs now (a live process holds the lock for one). */
export function rewriting(dir: string): boolean {
  return rewriter(dir) !== undefined;
}

/** The live process that holds the structure lock for a compaction or rebuild, if any. */
function rewriter(dir: string): Owner | undefined {
  const holder = readOwner(join(dir, STRUCTURE_LOCK));
  return holder !== undefined && alive(holder) && REWRITES.includes(holder.purpose ?? '')
    ? holder
    : undefined;
}

/** The structure lock for a seal, or undefined while another process seals or rewrites the index. */
export function sealLock(dir: string): DirLock | undefined {
  return DirLock.tryAcquire(dir, { file: STRUCTURE_LOCK, purpose: 'seal' });
}

/** This process's mark of having an index open; refused (LOCKED) while a compaction or rebuild runs. */
export class IndexUse {
  readonly #path: string | undefined;

  private constructor(path: string | undefined) {
    this.#path = path;
  }

  /** `follows`: this process takes up a compaction's result without a restart (a serving one). */
  static register(dir: string, follows = false): IndexUse {
    users(dir); // sweeps the marks SIGKILLed processes left
    const path = join(dir, `${USE_PREFIX}${process.pid}.${Math.random().toString(36).slice(2, 10)}`);
    const me: Owner = {
      ...DirLock.self(),
      since: new Date().toISOString(),
      ...(follows ? { follows } : {}),
    };
    try {
      writeFileSync(path, `${JSON.stringify(me)}\n`);
    } catch {
      // A read-only index directory: nothing can rewrite it under us either.
      return new IndexUse(undefined);
    }
    const holder = rewriter(dir);
    if (holder !== undefined) {
      rmSync(path, { force: true });
      throw new ParamineError(
        'LOCKED',
        `index ${dir} is being rewritten by process ${holder.pid} (\`${holder.purpose}\`, since ${holder.since}); ` +
          'open it once that ends',
        { field: dir },
      );
    }
    return new IndexUse(path);
  }

  release(): void {
    if (this.#path !== undefined) rmSync(this.#path, { force: true });
  }
}

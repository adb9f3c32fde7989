/**
 * An owner file that keeps two processes from running one stateful directory (a job store, an annotation
 * store) at once: both would resume the same jobs and write the same results twice. `LOCK` holds the
 * owner's pid, boot id and process start time; a lock whose owner is gone (killed, crashed, another boot)
 * is stale and taken over, so a SIGKILL never leaves a directory that refuses to open. Of processes racing
 * for a stale lock exactly one wins (removeStale).
 */
import { createHash } from 'node:crypto';
import { linkSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ParamineError } from '../errors.js';

export const LOCK_FILE = 'LOCK';

const ownerSchema = z.object({
  pid: z.number().int().positive(),
  host: z.string(),
  boot: z.string(),
  start: z.string(),
  since: z.string(),
  /** What the holder does with the directory (an index's structure lock: `index --compact`, `seal`). */
  purpose: z.string().optional(),
  /** An index's IN-USE mark: the process takes up a compaction's or rebuild's result while it runs (index-lock.ts). */
  follows: z.boolean().optional(),
});
export type Owner = z.output<typeof ownerSchema>;

export interface AcquireOptions {
  /** The lock file's name in the directory (default LOCK). */
  file?: string | undefined;
  /** What the holder will do, recorded for whoever is refused. */
  purpose?: string | undefined;
  /** What a refused user should do (default: stop the other process, or use another directory). */
  advice?: string | undefined;
}

const readOr = (path: string, fallback: string): string => {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return fallback;
  }
};

/** A lock file's content, or undefined when there is none (absence is no content a guard can hold). */
function lockContent(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

const bootId = (): string => readOr('/proc/sys/kernel/random/boot_id', 'unknown');

/** Field 22 of /proc/PID/stat: start time in clock ticks since boot (tells a reused pid apart). */
function startTime(pid: number): string | undefined {
  const stat = readOr(`/proc/${pid}/stat`, '');
  if (stat === '') return undefined;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

export function alive(o: Owner): boolean {
  if (o.host !== hostname() || o.boot !== bootId()) return false;
  try {
    process.kill(o.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const start = startTime(o.pid);
  return start === undefined || start === o.start;
}

/** The owner a lock file's text names (undefined: not an owner record, e.g. half written). */
function ownerOf(text: string): Owner | undefined {
  const r = ownerSchema.safeParse(
    (() => {
      try {
        return JSON.parse(text);
      } catch {
        return undefined;
      }
    })(),
  );
  return r.success ? r.data : undefined;
}

export function readOwner(path: string): Owner | undefined {
  return ownerOf(readOr(path, ''));
}

/** Tries to take a lock before giving up (each waits GUARD_WAIT_MS while another process takes over). */
const MAX_ATTEMPTS = 200;
const GUARD_WAIT_MS = 10;
/** A takeover guard this old was left by a taker that died mid-takeover (a takeover takes microseconds). */
const GUARD_STALE_MS = 30_000;

/**
 * Removes the stale lock file whose contents were `judged`, if it is still the one there. Only the process
 * holding this lock's takeover guard (a link, so one holder) removes it; every lock file is removed only by
 * the holder of its own content's guard, so between the check and the unlink the file cannot change, and
 * two takers never both remove a lock (the old rename-aside let a late taker move the winner's fresh lock:
 * 2 to 4 of 6 racing processes "won" a stale lock).
 */
function removeStale(path: string, judged: string, claim: string): void {
  const guard = `${path}.takeover-${createHash('sha256').update(judged).digest('hex').slice(0, 16)}`;
  try {
    linkSync(claim, guard);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const age = (() => {
      try {
        return Date.now() - statSync(guard).mtimeMs;
      } catch {
        return 0;
      }
    })();
    if (age > GUARD_STALE_MS) rmSync(guard, { force: true });
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, GUARD_WAIT_MS);
    return;
  }
  try {
    // A missing file never matches: a taker that read "none" and removed whatever was there next removed the
    // winner's fresh lock (two of six racers won once in CI).
    if (lockContent(path) === judged) rmSync(path, { force: true });
  } finally {
    rmSync(guard, { force: true });
  }
}

export class DirLock {
  readonly #path: string;
  #held = true;

  private constructor(path: string) {
    this.#path = path;
  }

  /** Takes `dir`'s lock or throws LOCKED naming the owner; `what` names the directory in messages. */
  static acquire(dir: string, what: string, o: AcquireOptions = {}): DirLock {
    const taken = DirLock.#take(dir, o);
    if (taken instanceof DirLock) return taken;
    if (taken === undefined) {
      throw new ParamineError('LOCKED', `${what} ${dir}: could not take its lock`, { field: dir });
    }
    throw new ParamineError(
      'LOCKED',
      `${what} ${dir} is in use by process ${taken.pid} (${taken.purpose ? `${taken.purpose}, ` : ''}since ` +
        `${taken.since}); ${o.advice ?? 'stop that service first, or give this one another directory'}`,
      { field: dir },
    );
  }

  /** This process as an owner record (pid, host, boot and start time) for marks of its own. */
  static self(): Omit<Owner, 'since'> {
    return { pid: process.pid, host: hostname(), boot: bootId(), start: startTime(process.pid) ?? '' };
  }

  /** Takes `dir`'s lock, or answers undefined while a live process holds it. */
  static tryAcquire(dir: string, o: AcquireOptions = {}): DirLock | undefined {
    const taken = DirLock.#take(dir, o);
    return taken instanceof DirLock ? taken : undefined;
  }

  /** The lock, or the live owner that holds it (undefined: could not take it in MAX_ATTEMPTS). */
  static #take(dir: string, o: AcquireOptions): DirLock | Owner | undefined {
    const path = join(dir, o.file ?? LOCK_FILE);
    const me: Owner = {
      ...DirLock.self(),
      since: new Date().toISOString(),
      ...(o.purpose === undefined ? {} : { purpose: o.purpose }),
    };
    const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(tmp, `${JSON.stringify(me)}\n`);
    try {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        try {
          linkSync(tmp, path); // atomic: fails when a lock file exists
          return new DirLock(path);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        }
        const judged = lockContent(path);
        // Gone between the link and the read (a taker removed it): try the link again.
        if (judged === undefined) continue;
        // Judged on the text just read: a second read could see another file than the one removeStale checks.
        const owner = ownerOf(judged);
        if (owner !== undefined && alive(owner)) return owner;
        removeStale(path, judged, tmp);
      }
      return undefined;
    } finally {
      unlinkSync(tmp);
    }
  }

  /** Gives the directory up (only while this process still owns the lock file). */
  release(): void {
    if (!this.#held) return;
    this.#held = false;
    const owner = readOwner(this.#path);
    if (owner?.pid === process.pid) unlinkSync(this.#path);
  }
}

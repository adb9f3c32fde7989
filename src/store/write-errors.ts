/**
 * LMDB writes that fail as a stable error. lmdb-js rejects a failed commit with "Commit failed (see
 * commitError for details)" and hangs the cause on `commitError`, a second promise that is rejected too:
 * left alone, that one is an unhandled rejection and takes the process down (found with a full tmpfs).
 */
import { diskFullOr } from '../errors.js';

async function cause(e: unknown): Promise<unknown> {
  const pending = (e as { commitError?: unknown } | null)?.commitError;
  if (pending instanceof Promise)
    return pending.then(
      () => e,
      (reason: unknown) => reason,
    );
  return e;
}

/** Runs an LMDB write; a full disk (or map) becomes DISK_FULL, and the commit error is always handled. */
export async function lmdbWrite<T>(what: string, write: () => Promise<T>): Promise<T> {
  guardLmdbCommitRejections();
  try {
    return await write();
  } catch (e) {
    const reason = await cause(e);
    const mapped = diskFullOr(reason, what);
    throw mapped === reason ? e : mapped;
  }
}

/**
 * For writes inside a transaction callback: lmdb-js returns a promise for each, rejected too when the
 * commit fails; the transaction's own promise carries the error, so these are only kept from becoming
 * unhandled rejections (which end the process).
 */
export function inTxn(write: unknown): void {
  if (write instanceof Promise) write.catch(() => undefined);
}

const COMMIT_FAILED = 'Commit failed (see commitError for details)';
let guarded = false;

/**
 * lmdb-js also rejects internal promises of a failed commit that no caller holds (seen with a full
 * disk: the write that failed is reported, then a second "Commit failed" rejection ends the process).
 * This handler drops exactly those — the failed write itself was already reported to its caller — and
 * rethrows every other unhandled rejection, so the default (crash on a real bug) is unchanged.
 */
export function guardLmdbCommitRejections(): void {
  if (guarded) return;
  guarded = true;
  process.on('unhandledRejection', (reason: unknown) => {
    const e = reason as { message?: unknown; commitError?: unknown } | null;
    if (e?.message === COMMIT_FAILED && e.commitError instanceof Promise) {
      e.commitError.catch(() => undefined);
      return;
    }
    throw reason;
  });
}

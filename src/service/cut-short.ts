/**
 * An index a crash left mid-compaction or mid-rebuild is finished before it is opened: the same idempotent
 * steps `paramine index --compact` / `--rebuild` runs again (rebuild-steps.ts), under the same rewrite lock,
 * so a SIGKILLed compaction costs a restart, not a command the user has to know. Then this process marks
 * the index open, which keeps a compaction from starting under it (store/index-lock.ts).
 */
import { domainFollowers } from '../domain/index.js';
import { commandOf, cutShortRun, finishCutShort } from '../indexer/rebuild-steps.js';
import { IndexUse, rewriteLock } from '../store/index.js';

/** `follows`: the process takes up a later compaction's result itself (generation.ts), so one may run beside it. */
export async function useIndex(
  dir: string,
  follows = false,
  log: (line: string) => void = () => {},
): Promise<IndexUse> {
  const run = await cutShortRun(dir, domainFollowers);
  if (run !== undefined) {
    const lock = rewriteLock(dir, commandOf(run.manifest));
    try {
      await finishCutShort(dir, log, domainFollowers);
    } finally {
      lock.release();
    }
  }
  return IndexUse.register(dir, follows);
}

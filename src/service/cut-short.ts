/**
 * An index a crash left mid-compaction or mid-rebuild is finished before it is opened: the same idempotent
 * steps `paramine index --compact` / `--rebuild` runs again (indexer/generation.ts), under the same lock,
 * so a SIGKILLed compaction costs a restart, not a command the user has to know. Then this process marks
 * the index open, which keeps a compaction from starting under it (store/index-lock.ts).
 */
import { domainFollowers } from '../domain/index.js';
import { finishCutShort } from '../indexer/generation.js';
import { IndexUse } from '../store/index.js';

/** `follows`: the process takes up a later compaction's result itself (generation.ts), so one may run beside it. */
export async function useIndex(
  dir: string,
  follows = false,
  log: (line: string) => void = () => {},
): Promise<IndexUse> {
  await finishCutShort(dir, log, domainFollowers);
  return IndexUse.register(dir, follows);
}

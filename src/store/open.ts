/** How every reader opens an index directory's sentences: the store read-only, and its group tables. */
import { join } from 'node:path';
import { GROUPS_DIR, GroupTables, groupTableIdentity } from './groups.js';
import { SentenceStore, STORE_DIR } from './store.js';

export interface IndexSentences {
  store: SentenceStore;
  /** undefined when the index has no group tables. */
  groups: GroupTables | undefined;
  close(): Promise<void>;
}

/** `manifest`: the index's (its build identity ties the group tables to this build). */
export function openIndexSentences(
  dir: string,
  manifest: Parameters<typeof groupTableIdentity>[0],
): IndexSentences {
  const store = SentenceStore.open(join(dir, STORE_DIR), { readOnly: true });
  const groups = GroupTables.open(join(dir, GROUPS_DIR), groupTableIdentity(manifest));
  return {
    store,
    groups,
    async close() {
      await groups?.close();
      await store.close();
    },
  };
}

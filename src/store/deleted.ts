/** The ids deleted from an index (its updates' tombstones), for readers that do not write to it. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { UPDATES_DIR } from './updates.js';

/**
 * The ids deleted from the index in `indexDir` (empty when nothing was ever written to it), read without
 * taking part in writes: a serving process may hold the updates open meanwhile (LMDB allows both).
 */
export function deletedIds(indexDir: string): Set<number> {
  const dir = join(indexDir, UPDATES_DIR);
  if (!existsSync(join(dir, 'data.mdb'))) return new Set();
  const root = open({ path: dir, readOnly: true, maxDbs: 8 });
  try {
    const deleted = root.openDB<{ s: number; at: number }, number>({ name: 'deleted', encoding: 'msgpack' });
    return new Set([...deleted.getKeys()]);
  } finally {
    void root.close();
  }
}

/**
 * Sentences by the ids users gave them, beside the index's own integer ids: a built record's `id` (kept
 * as its metadata and indexed in the `id` group table the build writes) and the client id of POST
 * /v1/sentences or `paramine add`. GET and DELETE /v1/sentences/{id} take any of them.
 */
import { ParamineError } from '../errors.js';
import { type GroupTables, type SentenceStore, USER_ID_KEY } from '../store/index.js';
import type { SentenceWrites } from './writes.js';

export interface UserIdParts {
  groups: GroupTables | undefined;
  store: SentenceStore;
  writes: SentenceWrites;
}

/** The index id `given` names: digits are the index's id; anything else an id the user gave. */
export function resolveSentenceId(given: string, parts: UserIdParts): number {
  if (/^\d+$/.test(given)) {
    const id = Number(given);
    if (Number.isSafeInteger(id)) return id;
  }
  const built = parts.groups?.list().some((t) => t.key === USER_ID_KEY)
    ? parts.groups.ids(USER_ID_KEY, given).filter((id) => parts.store.get(id) !== undefined)
    : [];
  const added = parts.writes.idForClient(given);
  const ids = [...new Set([...built, ...(added === undefined ? [] : [added])])];
  if (ids.length === 1) return ids[0] as number;
  if (ids.length > 1) {
    throw new ParamineError(
      'CONFLICT',
      `the id ${given} names ${ids.length} sentences (${ids.slice(0, 10).join(', ')}); use one of their index ids`,
      { field: 'id' },
    );
  }
  throw new ParamineError(
    'NOT_FOUND',
    `no sentence with id ${given}: not an index id (0, 1, 2, ...) nor an id a record or a write gave`,
    { field: 'id' },
  );
}

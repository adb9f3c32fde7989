/**
 * Group tables over an index that took writes: the built tables (groups.ts) and the sentences added since
 * the build or the last rebuild, grouped from their metadata (and taggers) as the tables group built ones.
 * A mining job opens one over the sentences it pinned when it was created, so its query order (group by
 * group) and its scopes are the same on every resume. Added ids are above every built one: a group's
 * members stay in ascending order. Groups only added sentences have come after the built tables' groups,
 * in value order.
 */
import { Turns } from '../turns.js';
import type { GroupTableInfo, GroupTables, GroupValue } from './groups.js';
import type { SentenceRecord } from './store.js';

/** What mining reads of group tables (GroupTables, or one with the added sentences). */
export type GroupView = Pick<
  GroupTables,
  'list' | 'require' | 'valuesOf' | 'ids' | 'count' | 'between' | 'groups'
>;

const compare = (a: GroupValue, b: GroupValue): number =>
  typeof a === typeof b ? (a < b ? -1 : a > b ? 1 : 0) : typeof a === 'number' ? -1 : 1;

/** The tables with `added` sentences (ascending ids, all above the built ones) as members too. */
export function withAdded(
  base: GroupTables,
  added: Iterable<{ id: number; record: SentenceRecord }>,
): GroupView {
  const byKey = new Map<string, Map<GroupValue, number[]>>();
  for (const info of base.list()) byKey.set(info.key, new Map());
  for (const { id, record } of added) {
    for (const [key, groups] of byKey) {
      for (const v of base.valuesOf(key, record)) {
        const ids = groups.get(v);
        if (ids === undefined) groups.set(v, [id]);
        else if (ids.at(-1) !== id) ids.push(id);
      }
    }
  }
  const more = (key: string, value: GroupValue): number[] => byKey.get(key)?.get(value) ?? [];
  return {
    list: (): GroupTableInfo[] => base.list(),
    require: (key: string, field: string, ordered?: boolean) => base.require(key, field, ordered),
    valuesOf: (key: string, record: SentenceRecord) => base.valuesOf(key, record),
    ids: (key: string, value: GroupValue) => [...base.ids(key, value), ...more(key, value)],
    count: (key: string, value: GroupValue) => base.count(key, value) + more(key, value).length,
    between(key: string, lo: number, hi: number) {
      const extra = [...(byKey.get(key) ?? [])].flatMap(([value, ids]) =>
        typeof value === 'number' && value >= lo && value <= hi ? ids.map((id) => ({ value, id })) : [],
      );
      return [...base.between(key, lo, hi), ...extra].sort((a, b) => a.value - b.value || a.id - b.id);
    },
    *groups(key: string, after?: GroupValue) {
      const own = byKey.get(key) ?? new Map<GroupValue, number[]>();
      const only = [...own.keys()].filter((v) => base.count(key, v) === 0).sort(compare);
      const afterOnly = after !== undefined && base.count(key, after) === 0;
      if (!afterOnly) {
        for (const g of base.groups(key, after)) {
          yield { value: g.value, count: g.count + (own.get(g.value)?.length ?? 0) };
        }
      }
      const from = afterOnly ? only.indexOf(after) + 1 : 0;
      for (const value of only.slice(from)) yield { value, count: own.get(value)?.length ?? 0 };
    },
  };
}

/**
 * `key`'s groups in order, each visited, the event loop let go when it is owed a turn (turns.ts): the
 * tables' cursor is closed first and opened again after the last value visited (10^6 documents' groups,
 * read with their members, take ~20 s).
 */
export async function forEachGroup(
  view: Pick<GroupView, 'groups'>,
  key: string,
  visit: (group: { value: GroupValue; count: number }) => void,
  turns = new Turns(),
): Promise<void> {
  let after: GroupValue | undefined;
  for (let cut = true; cut; ) {
    cut = false;
    for (const group of view.groups(key, after)) {
      after = group.value;
      visit(group);
      if (turns.due) {
        cut = true;
        break;
      }
    }
    if (cut) await turns.pass();
  }
}

/**
 * The query order of a scoped job over the whole index: group by group (or along the window's key), so a
 * batch holds a few whole groups and each group's members are read once. Deterministic (the group
 * tables' key order), so a resumed job sees the same sentences at the same positions; groups too small
 * to hold a pair are skipped.
 */
import type { GroupValue, GroupView } from '../store/index.js';
import { indexBatch, openQuerySource, type QuerySource, type SourceParts } from './queries.js';
import { effectiveScope, type JobSpec } from './spec.js';

/**
 * A job's query sentences: group by group for a scoped job over the whole index (one withinGroup key, or
 * a window's key), in id order otherwise. The job's creation and every run open it the same way.
 */
export async function openJobSource(
  spec: JobSpec,
  parts: SourceParts,
  tables: GroupView | undefined,
): Promise<QuerySource> {
  const scope = effectiveScope(spec);
  if (spec.scope.kind === 'all' && tables !== undefined) {
    if (scope.withinGroup.length === 1)
      return openGroupedSource(tables, scope.withinGroup[0] as string, parts, 2);
    if (scope.withinGroup.length === 0 && scope.window !== undefined)
      return openGroupedSource(tables, scope.window.key, parts, 1);
  }
  return openQuerySource(spec.scope, parts);
}

interface Cursor {
  /** Positions read so far. */
  position: number;
  /** The group being read (offset > 0) or the last one read whole (offset 0); undefined: none yet. */
  value: GroupValue | undefined;
  offset: number;
}

export function openGroupedSource(
  tables: GroupView,
  key: string,
  parts: SourceParts,
  minGroup: number,
): QuerySource {
  let total = 0;
  for (const g of tables.groups(key)) if (g.count >= minGroup) total += g.count;
  const start0: Cursor = { position: 0, value: undefined, offset: 0 };
  let at = start0;
  return {
    total,
    async batch(start, count) {
      // Batches come in order; anything else (a resumed job's first batch) walks from the beginning.
      let { position, value, offset } = start === at.position ? at : start0;
      const ids: number[] = [];
      const take = (members: readonly number[], from: number) => {
        let i = from;
        for (; i < members.length && ids.length < count; i++, position++) {
          if (position >= start) ids.push(members[i] as number);
        }
        return i;
      };
      const done = (cursor: Cursor) => {
        at = cursor;
        return indexBatch(parts, ids);
      };
      if (value !== undefined && offset > 0) {
        const members = tables.ids(key, value);
        offset = take(members, offset);
        if (offset < members.length) return done({ position, value, offset });
      }
      for (const g of value === undefined ? tables.groups(key) : tables.groups(key, value)) {
        if (ids.length === count) break;
        if (g.count >= minGroup) {
          if (position + g.count <= start) position += g.count;
          else {
            const members = tables.ids(key, g.value);
            const i = take(members, 0);
            if (i < members.length) return done({ position, value: g.value, offset: i });
          }
        }
        value = g.value;
      }
      return done({ position, value, offset: 0 });
    },
  };
}

/**
 * Which documents may pair (docs align's scope options): the same values of `same`, different ones of
 * `differ`, dates within a window; and the keys the options name checked against the documents first.
 */
import { ParamineError } from '../errors.js';
import type { AlignOptions } from './align-options.js';

/** The documents' metadata, row by row. */
interface Metadata {
  readonly count: number;
  meta(r: number): Readonly<Record<string, unknown>>;
  /** Every key of the metadata, where meta(r) holds fewer (DocumentSet.keys). */
  keys?: ReadonlySet<string> | undefined;
}

const DAY_MS = 86_400_000;

/**
 * The keys the options name, checked against the documents' metadata: a typo (`--differ outlets`) would
 * otherwise filter nothing, or everything, without a word; a window needs dates and both of its halves.
 */
export function checkKeys(set: Metadata, o: AlignOptions): void {
  if ((o.windowKey === undefined) !== (o.days === undefined)) {
    throw new ParamineError('BAD_INPUT', 'a window needs both --window-key and --days', {
      field: o.days === undefined ? 'days' : 'windowKey',
    });
  }
  const known = new Set<string>(set.keys);
  if (set.keys === undefined)
    for (let r = 0; r < set.count; r++) for (const key of Object.keys(set.meta(r))) known.add(key);
  const named: Array<[string, string]> = [
    ...o.same.map((k): [string, string] => [k, 'same']),
    ...o.differ.map((k): [string, string] => [k, 'differ']),
    ...(o.windowKey === undefined ? [] : [[o.windowKey, 'windowKey'] as [string, string]]),
  ];
  for (const [key, field] of named) {
    if (!known.has(key)) {
      const list = [...known].sort().join(', ') || 'none';
      throw new ParamineError('BAD_INPUT', `no document has the key "${key}" (the keys: ${list})`, { field });
    }
  }
  const key = o.windowKey;
  if (key !== undefined && !hasDate(set, key)) {
    throw new ParamineError('BAD_INPUT', `no document has a date under "${key}" (e.g. 2024-05-01)`, {
      field: 'windowKey',
    });
  }
}

/** The metadata keys the options read (what compatible() compares): same, differ, the window's. */
export const scopeKeys = (o: AlignOptions): string[] => [
  ...new Set([...o.same, ...o.differ, ...(o.windowKey === undefined ? [] : [o.windowKey])]),
];

/** Whether two documents may pair: same values of `same`, different ones of `differ`, dates within the window. */
export function compatible(
  a: Readonly<Record<string, unknown>>,
  b: Readonly<Record<string, unknown>>,
  o: AlignOptions,
): boolean {
  for (const k of o.same) if (a[k] === undefined || a[k] !== b[k]) return false;
  for (const k of o.differ) if (a[k] !== undefined && a[k] === b[k]) return false;
  if (o.windowKey !== undefined && o.days !== undefined) {
    const ta = Date.parse(String(a[o.windowKey]));
    const tb = Date.parse(String(b[o.windowKey]));
    if (!Number.isFinite(ta) || !Number.isFinite(tb) || Math.abs(ta - tb) > o.days * DAY_MS) return false;
  }
  return true;
}

function hasDate(set: Metadata, key: string): boolean {
  for (let r = 0; r < set.count; r++) if (Number.isFinite(Date.parse(String(set.meta(r)[key])))) return true;
  return false;
}

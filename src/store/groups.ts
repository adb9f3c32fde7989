/**
 * Group tables of an index: for a metadata key (paper, trend, url, term, date …), every value -> the
 * ids of the sentences that have it, so mining within a group reads the group's members instead of
 * scanning the index. One LMDB environment in INDEX/groups/ beside the sentence store: a dupSort
 * database per key (value -> sorted ids) and an info record per key, written last, so a table that has
 * its info is complete.
 *
 * A key's values come from the sentence's metadata; a key with a tagger (src/text/taggers.ts: `term`)
 * takes the tagger's value where the metadata has none. Array values put a sentence in several groups.
 * Ordered keys (`date`: ISO-8601 strings, stored as epoch milliseconds; `number`) answer value ranges,
 * which windows need.
 *
 *   const w = GroupTableWriter.open(dir);  await w.write([{ key: 'paper', order: 'none' }], rows, identity);
 *   const t = GroupTables.open(dir, identity);  t?.ids('paper', 'P17-1001');  // [4, 5, 9, …]
 */
import { existsSync, mkdirSync } from 'node:fs';
import { type Database, open, type RootDatabase } from 'lmdb';
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import { taggerFor } from '../text/index.js';
import type { SentenceRecord } from './store.js';

export const GROUPS_DIR = 'groups';
/**
 * The metadata key of the ids users give their records (a jsonl `id`, a CSV `id` column): the build
 * writes its table when the records carry one, so GET and DELETE /v1/sentences/{id} find them by it.
 */
export const USER_ID_KEY = 'id';
const FORMAT_VERSION = 1;
/** Sentences per write transaction while building. */
const TXN_ROWS = 20_000;

export const groupOrderSchema = z.enum(['none', 'date', 'number']);
export type GroupOrder = z.infer<typeof groupOrderSchema>;
export type GroupValue = string | number;

export const groupKeySpecSchema = z
  .object({
    key: z
      .string()
      .min(1)
      .max(200)
      .refine((k) => !/\p{Cc}/u.test(k), 'no control characters'),
    order: groupOrderSchema.default('none'),
  })
  .strict();
export type GroupKeySpec = z.output<typeof groupKeySpecSchema>;

export interface GroupTableInfo {
  formatVersion: number;
  key: string;
  order: GroupOrder;
  /** The tagger that filled values the metadata lacked ("definitions@1"), if the key has one. */
  tagger?: string;
  /** Distinct values, (sentence, value) entries, sentences with at least one value, the largest group. */
  groups: number;
  members: number;
  sentences: number;
  largest: number;
  /** The build of the index the table was made from (a rebuilt index needs a new table). */
  index: string;
  builtAt: string;
}

/** 'KEY' or 'KEY:date' / 'KEY:number' (the CLI's form) -> a spec. */
export function parseGroupKeySpec(text: string): GroupKeySpec {
  const t = text.trim();
  const colon = t.lastIndexOf(':');
  const key = colon < 0 ? t : t.slice(0, colon);
  const order = colon < 0 ? 'none' : t.slice(colon + 1);
  const r = groupKeySpecSchema.safeParse({ key, order });
  if (!r.success) {
    const issue = r.error.issues[0];
    const why =
      issue?.path[0] === 'order' ? `order must be none, date or number, not "${order}"` : issue?.message;
    throw new ParamineError('BAD_INPUT', `bad group key "${text}": ${why}`, { field: 'key' });
  }
  return r.data;
}

function scalarValue(v: unknown, order: GroupOrder): GroupValue | undefined {
  if (order === 'none') {
    if (typeof v === 'string') return v.trim() === '' ? undefined : v.trim();
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    if (typeof v === 'boolean') return String(v);
    return undefined;
  }
  if (order === 'number') {
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
    return Number.isFinite(n) ? n : undefined;
  }
  if (typeof v !== 'string') return undefined;
  const t = Date.parse(v);
  return Number.isFinite(t) ? t : undefined;
}

/** The group values of one sentence under a key (deduplicated): metadata first, then the key's tagger. */
export function groupValuesOf(spec: GroupKeySpec, record: SentenceRecord): GroupValue[] {
  const raw = record.meta?.[spec.key];
  const list = Array.isArray(raw) ? raw : [raw];
  const out = new Set<GroupValue>();
  for (const v of list) {
    const s = scalarValue(v, spec.order);
    if (s !== undefined) out.add(s);
  }
  if (out.size === 0 && spec.order === 'none') {
    const tagged = taggerFor(spec.key)?.tag(record.text);
    if (tagged !== undefined && tagged !== '') out.add(tagged);
  }
  return [...out];
}

const infoSchema = z.object({
  formatVersion: z.literal(FORMAT_VERSION),
  key: z.string(),
  order: groupOrderSchema,
  tagger: z.string().optional(),
  groups: z.number(),
  members: z.number(),
  sentences: z.number(),
  largest: z.number(),
  index: z.string(),
  builtAt: z.string(),
});

function openEnv(dir: string, readOnly: boolean): RootDatabase {
  try {
    if (!readOnly) mkdirSync(dir, { recursive: true });
    return open({ path: dir, readOnly, maxDbs: 256, mapSize: 2 ** 40, noMemInit: true });
  } catch (e) {
    throw new ParamineError('BAD_FILE', `cannot open the group tables at ${dir}: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

const dbName = (key: string) => `g:${key}`;

/**
 * What ties a table to one build of an index: a rebuilt index under the same name gets new tables. An
 * `index --rebuild` (same sentences and ids, retrained) carries the identity over in `build.groupsIdentity`.
 */
export function groupTableIdentity(manifest: {
  createdAt: string;
  ntotal: number;
  build?: Record<string, unknown> | undefined;
}): string {
  const carried = manifest.build?.groupsIdentity;
  return typeof carried === 'string' ? carried : `${manifest.createdAt}:${manifest.ntotal}`;
}

/** Writes group tables (the build, or `paramine groups build` on an existing index). */
export class GroupTableWriter {
  private constructor(
    private readonly root: RootDatabase,
    private readonly infos: Database<GroupTableInfo, string>,
  ) {}

  static open(dir: string): GroupTableWriter {
    const root = openEnv(dir, false);
    return new GroupTableWriter(
      root,
      root.openDB<GroupTableInfo, string>({ name: 'info', encoding: 'json' }),
    );
  }

  /**
   * Replaces the tables of `specs` with the groups of `rows` (ids ascending), in one streaming pass over
   * them for all keys: memory stays bounded whatever the corpus size. Info records are written last.
   */
  async write(
    specs: readonly GroupKeySpec[],
    rows: Iterable<{ id: number; record: SentenceRecord }>,
    identity: string,
    onProgress?: (sentences: number) => void,
  ): Promise<GroupTableInfo[]> {
    const tables = specs.map((spec) => ({ spec, db: this.members(spec.key), members: 0, sentences: 0 }));
    for (const t of tables) {
      await this.infos.remove(t.spec.key);
      await t.db.clearAsync();
    }
    let read = 0;
    let pending: Array<[Database<number, GroupValue>, GroupValue, number]> = [];
    const flush = async () => {
      const batch = pending;
      pending = [];
      await this.root.transaction(() => {
        for (const [db, v, id] of batch) db.put(v, id);
      });
      onProgress?.(read);
    };
    for (const { id, record } of rows) {
      read++;
      for (const t of tables) {
        const values = groupValuesOf(t.spec, record);
        if (values.length > 0) t.sentences++;
        t.members += values.length;
        for (const v of values) pending.push([t.db, v, id]);
      }
      if (read % TXN_ROWS === 0) await flush();
    }
    await flush();
    const builtAt = new Date().toISOString();
    const out: GroupTableInfo[] = [];
    for (const { spec, db, members, sentences } of tables) {
      let groups = 0;
      let largest = 0;
      for (const v of db.getKeys()) {
        groups++;
        largest = Math.max(largest, db.getValuesCount(v));
      }
      const tagger = spec.order === 'none' ? taggerFor(spec.key)?.id : undefined;
      const info: GroupTableInfo = {
        formatVersion: FORMAT_VERSION,
        key: spec.key,
        order: spec.order,
        ...(tagger === undefined ? {} : { tagger }),
        groups,
        members,
        sentences,
        largest,
        index: identity,
        builtAt,
      };
      await this.infos.put(spec.key, info);
      out.push(info);
    }
    return out;
  }

  private members(key: string): Database<number, GroupValue> {
    return this.root.openDB<number, GroupValue>({
      name: dbName(key),
      dupSort: true,
      encoding: 'ordered-binary',
    });
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}

/** The group tables of an index, read-only. */
export class GroupTables {
  private readonly dbs = new Map<string, Database<number, GroupValue>>();
  private readonly infoByKey = new Map<string, GroupTableInfo>();

  private constructor(
    private readonly root: RootDatabase,
    private readonly identity: string,
  ) {
    const infos = root.openDB<unknown, string>({ name: 'info', encoding: 'json' });
    for (const { key, value } of infos.getRange({})) {
      const parsed = infoSchema.safeParse(value);
      if (parsed.success) this.infoByKey.set(key, parsed.data);
    }
  }

  /** The tables in `dir` (INDEX/groups), or undefined when the index has none. */
  static open(dir: string, identity: string): GroupTables | undefined {
    if (!existsSync(dir)) return undefined;
    return new GroupTables(openEnv(dir, true), identity);
  }

  /** Every table, fresh or stale. */
  list(): GroupTableInfo[] {
    return [...this.infoByKey.values()];
  }

  /**
   * The table of `key`, checked: it exists, was built from this build of the index, and (for windows)
   * is ordered. `field` names the request field in the error.
   */
  require(key: string, field: string, ordered = false): GroupTableInfo {
    const info = this.infoByKey.get(key);
    if (info === undefined) {
      throw new ParamineError(
        'BAD_INPUT',
        `the index has no group table for "${key}"${this.hint()}; build one with \`paramine groups build --index DIR --key ${key}${ordered ? ':date' : ''}\``,
        { field },
      );
    }
    if (info.index !== this.identity) {
      throw new ParamineError(
        'CONFLICT',
        `the group table for "${key}" was built for another build of this index; rebuild it with \`paramine groups build\``,
        { field },
      );
    }
    if (ordered && info.order === 'none') {
      throw new ParamineError(
        'BAD_INPUT',
        `"${key}" is not an ordered key (its table was built unordered); rebuild it as ${key}:date or ${key}:number`,
        { field },
      );
    }
    return info;
  }

  private hint(): string {
    const keys = [...this.infoByKey.keys()];
    return keys.length === 0 ? '' : ` (it has ${keys.map((k) => `"${k}"`).join(', ')})`;
  }

  valuesOf(key: string, record: SentenceRecord): GroupValue[] {
    const info = this.infoByKey.get(key);
    if (info === undefined) return [];
    return groupValuesOf({ key, order: info.order }, record);
  }

  /** Ids with this value, ascending. */
  ids(key: string, value: GroupValue): number[] {
    return [...this.db(key).getValues(value)];
  }

  count(key: string, value: GroupValue): number {
    return this.db(key).getValuesCount(value);
  }

  /** (value, id) entries with lo <= value <= hi of an ordered key, in value order. */
  between(key: string, lo: number, hi: number): Array<{ value: number; id: number }> {
    const out: Array<{ value: number; id: number }> = [];
    for (const { key: v, value: id } of this.db(key).getRange({ start: lo })) {
      if ((v as number) > hi) break;
      out.push({ value: v as number, id });
    }
    return out;
  }

  /** Every value with its group size, in value order, from `after` on (exclusive). */
  *groups(key: string, after?: GroupValue): Generator<{ value: GroupValue; count: number }> {
    const db = this.db(key);
    for (const value of db.getKeys(after === undefined ? {} : { start: after })) {
      if (after !== undefined && value === after) continue;
      yield { value, count: db.getValuesCount(value) };
    }
  }

  private db(key: string): Database<number, GroupValue> {
    let db = this.dbs.get(key);
    if (db === undefined) {
      db = this.root.openDB<number, GroupValue>({
        name: dbName(key),
        dupSort: true,
        encoding: 'ordered-binary',
      });
      this.dbs.set(key, db);
    }
    return db;
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}

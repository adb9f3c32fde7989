/**
 * Group tables for an index (src/store/groups.ts): one streaming pass over the sentence store that
 * fills the tables of every key asked for. The build calls it at its end (`paramine index
 * --group-keys paper,term`); `paramine groups build` runs it on an existing index.
 */
import { join, resolve } from 'node:path';
import { readManifest } from '../index/index.js';
import { createProgress } from '../progress.js';
import {
  GROUPS_DIR,
  type GroupKeySpec,
  type GroupTableInfo,
  GroupTables,
  GroupTableWriter,
  groupTableIdentity,
  SentenceStore,
  STORE_DIR,
} from '../store/index.js';

export async function buildGroupTables(
  indexDir: string,
  specs: readonly GroupKeySpec[],
  options: { quiet?: boolean; store?: SentenceStore } = {},
): Promise<GroupTableInfo[]> {
  if (specs.length === 0) return [];
  const dir = resolve(indexDir);
  const manifest = await readManifest(dir);
  // The build hands its own open store (LMDB wants one handle per environment and process).
  const store = options.store ?? SentenceStore.open(join(dir, STORE_DIR), { readOnly: true });
  const writer = GroupTableWriter.open(join(dir, GROUPS_DIR));
  const bar = createProgress({
    label: `groups ${specs.map((s) => s.key).join(',')}`,
    unit: 'sentences',
    quiet: options.quiet ?? false,
  });
  try {
    const infos = await writer.write(
      specs,
      store.range(0, manifest.ntotal),
      groupTableIdentity(manifest),
      (n) => bar.update(n, manifest.ntotal),
    );
    bar.stop();
    return infos;
  } finally {
    await writer.close();
    if (options.store === undefined) await store.close();
  }
}

/**
 * The index's group tables that are older than its manifest (an `index --rebuild` folded added sentences
 * in since they were written), as the specs to build them again; [] when none is.
 */
export async function staleGroupTables(indexDir: string): Promise<GroupKeySpec[]> {
  const manifest = await readManifest(indexDir);
  const tables = GroupTables.open(join(indexDir, GROUPS_DIR), groupTableIdentity(manifest));
  if (tables === undefined) return [];
  try {
    const made = Date.parse(manifest.createdAt);
    return tables
      .list()
      .filter((t) => Date.parse(t.builtAt) < made)
      .map((t) => ({ key: t.key, order: t.order }));
  } finally {
    await tables.close();
  }
}

/** One line per table, for the CLI. */
export function describeGroupTable(info: GroupTableInfo): string {
  const tagger = info.tagger ? `, tagger ${info.tagger}` : '';
  const order = info.order === 'none' ? '' : ` (ordered: ${info.order})`;
  return `${info.key}${order}: ${info.groups} groups, ${info.sentences} sentences with a value, largest group ${info.largest}${tagger}`;
}

/**
 * `paramine docs align` over an index directory, as a service serving it sees it: its store with the
 * updates' overlay (deleted sentences and documents left out), its group tables with the added sentences as
 * members of their documents, and their embeddings as added (the mean method).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readManifest, VectorFile } from '../index/index.js';
import { dropMappedPages } from '../native/index.js';
import {
  GROUPS_DIR,
  IndexUpdates,
  openIndexSentences,
  STORE_DIR,
  UPDATES_DIR,
  withAdded,
} from '../store/index.js';
import {
  type Alignment,
  type AlignOptionsInput,
  type AlignParts,
  type AlignShare,
  alignDocuments,
  documentsShare,
} from './align.js';
import type { AlignHooks } from './align-pairs.js';

/**
 * alignDocuments over the index in `dir` with its writes, everything opened for the call and closed as soon
 * as the documents are read.
 */
export function alignIndexDir(
  dir: string,
  input: AlignOptionsInput,
  hooks: AlignHooks = {},
): Promise<Alignment> {
  return withIndexParts(dir, (parts) => alignDocuments(parts, input, hooks));
}

/**
 * A worker's share of a distributed alignment of the index in `dir` (queue/align.ts): the documents are
 * read and made ready, then the index is closed; the share holds what its searches need.
 */
export function indexDirShare(dir: string, input: AlignOptionsInput, work: string): Promise<AlignShare> {
  return withIndexParts(dir, (parts) => documentsShare(parts, input, work));
}

async function withIndexParts<T>(dir: string, use: (parts: AlignParts) => Promise<T>): Promise<T> {
  const { store, groups, close } = openIndexSentences(dir, await readManifest(dir));
  const vectors = await VectorFile.open(dir);
  const updates = existsSync(join(dir, UPDATES_DIR, 'data.mdb'))
    ? IndexUpdates.open(dir, store.count, new Set<number>())
    : undefined;
  let storeClosed: Promise<void> | undefined;
  // The store once the documents are read (its mapped pages leave the alignment's RSS); the embeddings are
  // read by position (no pages held) and stay open for the sentence match.
  const release = () => {
    storeClosed ??= close();
    return storeClosed;
  };
  // Pages read through LMDB's maps so far leave the resident set; the store stays open (~1 GB at 10^6 documents).
  const trim = () => {
    for (const sub of [STORE_DIR, GROUPS_DIR]) dropMappedPages(join(dir, sub, 'data.mdb'));
  };
  try {
    const parts: AlignParts = { store, groups, vectors, release, trim };
    if (updates !== undefined) {
      store.setOverlay(updates);
      const added = [...updates.addedSentences()].map((a) => ({
        id: a.id,
        record: a.meta === undefined ? { text: a.text } : { text: a.text, meta: a.meta },
      }));
      parts.groups = groups && withAdded(groups, added);
      parts.added = { base: store.count, vectors: (ids) => updates.vectorsOf(ids) };
    }
    return await use(parts);
  } finally {
    await updates?.close();
    await vectors?.close();
    await release();
  }
}

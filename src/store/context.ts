/**
 * A sentence's context: the sentences before and after it in its document (documents read with
 * `paramine index --documents`, or subtitles), from the index's `doc` group table, in document order.
 */
import { ParamineError } from '../errors.js';
import { readManifest } from '../index/index.js';
import { deletedIds } from './deleted.js';
import type { GroupTables } from './groups.js';
import { type IndexSentences, openIndexSentences } from './open.js';
import type { SentenceRecord, SentenceStore } from './store.js';

/** Most sentences of context on each side a request or an export may ask for. */
export const MAX_CONTEXT = 50;

export interface ContextSentence extends SentenceRecord {
  id: number;
}

export interface SentenceContext {
  /** The document's id, as the input gave it. */
  doc: string;
  before: ContextSentence[];
  after: ContextSentence[];
}

const positionOf = (r: ContextSentence): number => (typeof r.meta?.pos === 'number' ? r.meta.pos : r.id);

/**
 * The `n` sentences on each side of `id` in its document; undefined when the sentence has no document.
 * `field` names the request field in errors.
 */
export function sentenceContext(
  store: SentenceStore,
  groups: GroupTables | undefined,
  id: number,
  n: number,
  field = 'context',
): SentenceContext | undefined {
  const rec = store.get(id);
  const doc = rec?.meta?.doc;
  if (rec === undefined || (typeof doc !== 'string' && typeof doc !== 'number')) return undefined;
  if (groups === undefined) {
    throw new ParamineError(
      'BAD_INPUT',
      'the index has no group tables; build the document table with `paramine groups build --index DIR --key doc`',
      { field },
    );
  }
  groups.require('doc', field);
  // Sentences deleted since the build (store.get: undefined) are not context any more.
  const members = groups
    .ids('doc', String(doc))
    .flatMap((m) => {
      const r = store.get(m);
      return r === undefined ? [] : [{ id: m, ...r }];
    })
    .sort((a, b) => positionOf(a) - positionOf(b));
  const at = members.findIndex((m) => m.id === id);
  return {
    doc: String(doc),
    before: members.slice(Math.max(0, at - n), Math.max(0, at)),
    after: at < 0 ? [] : members.slice(at + 1, at + 1 + n),
  };
}

/** The sentences and document table of an index directory, opened read-only for context lookups. */
export class ContextReader {
  private constructor(private readonly parts: IndexSentences) {}

  static async open(indexDir: string): Promise<ContextReader> {
    const parts = openIndexSentences(indexDir, await readManifest(indexDir));
    // Sentences deleted since the build are no one's context (as in the service, which reads its updates).
    const deleted = deletedIds(indexDir);
    if (deleted.size > 0) parts.store.setOverlay({ lookup: (id) => (deleted.has(id) ? null : undefined) });
    return new ContextReader(parts);
  }

  context(id: number, n: number, field = 'context'): SentenceContext | undefined {
    return sentenceContext(this.parts.store, this.parts.groups, id, n, field);
  }

  close(): Promise<void> {
    return this.parts.close();
  }
}

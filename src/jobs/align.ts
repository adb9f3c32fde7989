/**
 * Document pairs (Turku's first phase, MRPC's news clusters): documents likely to share paraphrases, found
 * by document vectors and the same FAISS search as sentences, kept inside a similarity band (too similar is
 * the same text reformatted, too far is misaligned), optionally within a window on an ordered key and among
 * documents that share the values of some keys (a title, a subforum), at most `partners` per document.
 *
 * Document vectors, two ways (both measured, BENCHMARKS.md):
 *  - tfidf: character 2-4-gram TF-IDF within word boundaries, as Turku (sklearn's char_wb), kept sparse
 *    (align-grams.ts); a `dim`-float projection of it finds each document's candidates in an index chosen
 *    for their number (align-search.ts), and the exact TF-IDF cosine scores them;
 *  - mean: the mean of the document's stored sentence embeddings (vectors.f16), normalized.
 * Sub-quadratic: IVF search over the documents, never all pairs; memory ~2.5 bytes a distinct n-gram of
 * each document plus the index (docs/benchmarks/documents.md has the figures at 10^6 documents).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import type { VectorFile } from '../index/index.js';
import {
  forEachGroup,
  type GroupValue,
  type GroupView,
  type SentenceRecord,
  type SentenceStore,
} from '../store/index.js';
import { type AlignOptions, type AlignOptionsInput, alignOptionsSchema } from './align-options.js';
import {
  type AlignHooks,
  type Alignment,
  type AlignShare,
  alignDocumentSet,
  alignShare,
  type DocumentSet,
} from './align-pairs.js';
import { scopeKeys } from './align-scope.js';
import { MATCH_SENTENCES, roomFor, type SentenceRows } from './align-sentences.js';
import type { MeanChunk } from './align-vectors.js';

export { type AlignOptions, type AlignOptionsInput, alignOptionsSchema } from './align-options.js';
export type { Alignment, AlignShare, DocPair, SharePlan } from './align-pairs.js';

export interface AlignParts {
  /** The store with its updates' overlay (deleted sentences read as gone), and the groups with added members. */
  store: SentenceStore;
  groups: GroupView | undefined;
  vectors?: VectorFile | undefined;
  /** Sentences added since the build: their embeddings, as added (methods mean and hybrid read them). */
  added?: { readonly base: number; vectors(ids: readonly number[]): Float32Array } | undefined;
  /**
   * Closes the store early, once the documents are read (DocumentSet.release; the embeddings stay open for the
   * sentence match); safe to call twice.
   */
  release?: (() => Promise<void>) | undefined;
  /** Lets go of the store's pages read so far (DocumentSet.trim). */
  trim?: (() => void) | undefined;
}

/**
 * The documents of the index, packed (~65 bytes each where the options name no metadata key, against ~330 as
 * an object each: 0.27 GB less at 10^6 documents): document r is group `ids[r]`, its sentences are
 * `sentences[starts[r] .. starts[r + 1])`, and `meta[r]` holds only the keys the options name (`keys`: all
 * the documents' keys, for checkKeys' message).
 */
interface Docs {
  count: number;
  ids: GroupValue[];
  starts: Int32Array;
  sentences: Int32Array;
  meta: Array<Readonly<Record<string, unknown>>>;
  keys: Set<string>;
}

const NO_META: Readonly<Record<string, unknown>> = Object.freeze({});

const sentencesOf = (docs: Docs, r: number): Int32Array =>
  docs.sentences.subarray(docs.starts[r] as number, docs.starts[r + 1] as number);

/** The documents of the index: its `docKey` groups, each with its sentence ids and first sentence's metadata. */
async function documentsOf(parts: AlignParts, key: string, named: readonly string[]): Promise<Docs> {
  // An index not built from documents has no documents to pair: say how to get some, not only which table.
  const noDocuments = (why: string) =>
    new ParamineError(
      'BAD_INPUT',
      `${why}: build the index from documents (\`paramine index --documents\`), or name the metadata key ` +
        `that groups its sentences into documents with --doc-key KEY and build its table ` +
        `(\`paramine groups build --index DIR --key KEY\`)`,
      { field: 'docKey' },
    );
  if (parts.groups === undefined)
    throw noDocuments(`the index has no group tables, so no "${key}" documents`);
  const groups = parts.groups;
  groups.require(key, 'docKey');
  const [ids, meta, keys] = [[] as GroupValue[], [] as Docs['meta'], new Set<string>()];
  const [starts, all] = [[0], [] as number[]];
  await forEachGroup(groups, key, ({ value }) => {
    // Sentences deleted since the build are no part of their document any more.
    const sentences = groups.ids(key, value).filter((id) => !parts.store.isDeleted(id));
    if (sentences.length === 0) return;
    const m = parts.store.get(sentences[0] as number)?.meta ?? {};
    for (const k of Object.keys(m)) keys.add(k);
    ids.push(value);
    meta.push(named.length === 0 ? NO_META : Object.fromEntries(named.map((k) => [k, m[k]])));
    for (const id of sentences) all.push(id);
    starts.push(all.length);
  });
  if (ids.length === 0) throw noDocuments(`no sentence of the index has a "${key}" value`);
  const packed = { starts: Int32Array.from(starts), sentences: Int32Array.from(all) };
  return { count: ids.length, ids, meta, keys, ...packed };
}

function normalizeRows(m: Float32Array, dim: number): void {
  for (let at = 0; at < m.length; at += dim) {
    let n = 0;
    for (let i = at; i < at + dim; i++) n += (m[i] as number) * (m[i] as number);
    const inv = n > 0 ? 1 / Math.sqrt(n) : 0;
    for (let i = at; i < at + dim; i++) m[i] = (m[i] as number) * inv;
  }
}

/** Documents whose built rows are read in one readIds call: one worker-thread gather, not a read a sentence. */
const MEAN_CHUNK = 4096;

/**
 * The embeddings of sentences, in the order given: built ones from vectors.f16, added ones as they were
 * embedded; in `reuse` where it has room (roomFor).
 */
async function embeddings(
  ids: readonly number[],
  parts: AlignParts,
  reuse?: Float32Array,
): Promise<Float32Array> {
  const vectors = parts.vectors as VectorFile;
  const dim = vectors.dim;
  const builtIds = ids.filter((id) => id < vectors.count);
  const addedIds = ids.filter((id) => id >= vectors.count);
  const added = parts.added;
  if (addedIds.length > 0 && (added === undefined || addedIds.some((id) => id < added.base))) {
    throw new ParamineError(
      'BAD_INPUT',
      `no embedding kept for sentence ${addedIds[0]}: it was added without one; align with --method tfidf`,
      { field: 'method' },
    );
  }
  const rows = roomFor(reuse, ids.length * dim);
  if (addedIds.length === 0) return vectors.readIds(builtIds, rows);
  const built = await vectors.readIds(builtIds);
  const extra = (added as NonNullable<AlignParts['added']>).vectors(addedIds);
  let [b, a] = [0, 0];
  ids.forEach((id, x) => {
    const [from, at] = id < vectors.count ? [built, b++] : [extra, a++];
    rows.set(from.subarray(at * dim, (at + 1) * dim), x * dim);
  });
  return rows;
}

async function* meanVectors(
  docs: Docs,
  parts: AlignParts,
  progress?: (done: number, total: number) => void,
): AsyncGenerator<MeanChunk> {
  const dim = (parts.vectors as VectorFile).dim;
  for (let first = 0; first < docs.count; first += MEAN_CHUNK) {
    const end = Math.min(docs.count, first + MEAN_CHUNK);
    const from = docs.starts[first] as number;
    const rows = await embeddings(Array.from(docs.sentences.subarray(from, docs.starts[end])), parts);
    const m = new Float32Array((end - first) * dim);
    for (let r = first; r < end; r++) {
      const row = m.subarray((r - first) * dim, (r - first + 1) * dim);
      const [lo, hi] = [(docs.starts[r] as number) - from, (docs.starts[r + 1] as number) - from];
      for (let at = lo * dim; at < hi * dim; at += dim)
        for (let i = 0; i < dim; i++) row[i] = (row[i] as number) + (rows[at + i] as number);
    }
    normalizeRows(m, dim);
    progress?.(end, docs.count);
    yield { dim, rows: m };
  }
}

/** The sentences of documents `rows` for the match (align-sentences.ts): at most MATCH_SENTENCES each, spread. */
async function sentenceRows(
  docs: Docs,
  parts: AlignParts,
  rows: readonly number[],
  reuse?: Float32Array,
): Promise<SentenceRows> {
  const starts = new Int32Array(rows.length + 1);
  const ids: number[] = [];
  rows.forEach((r, x) => {
    const all = sentencesOf(docs, r);
    const take = Math.min(all.length, MATCH_SENTENCES);
    for (let s = 0; s < take; s++) ids.push(all[Math.floor((s * all.length) / take)] as number);
    starts[x + 1] = ids.length;
  });
  // Unit rows already: the encoder L2-normalizes what the index and `paramine add` keep (encode/core.ts).
  return { dim: (parts.vectors as VectorFile).dim, starts, rows: await embeddings(ids, parts, reuse) };
}

/** Document pairs of the index's documents (its `docKey` groups) inside the band, at most `partners` each. */
export async function alignDocuments(
  parts: AlignParts,
  input: AlignOptionsInput,
  hooks: AlignHooks = {},
): Promise<Alignment> {
  const o = alignOptionsSchema.parse(input);
  return alignDocumentSet(await documentSet(parts, o), o, hooks);
}

/** A worker's share of a distributed alignment of the index's documents (queue/align.ts). */
export async function documentsShare(
  parts: AlignParts,
  input: AlignOptionsInput,
  work: string,
): Promise<AlignShare> {
  const o = alignOptionsSchema.parse(input);
  return alignShare(await documentSet(parts, o), o, work);
}

async function documentSet(parts: AlignParts, o: AlignOptions): Promise<DocumentSet> {
  const docs = await documentsOf(parts, o.docKey, scopeKeys(o));
  // Each document's first sentence was read (its metadata): pages of the whole store.
  parts.trim?.();
  return {
    count: docs.count,
    id: (r) => String(docs.ids[r]),
    text: (r) =>
      Array.from(sentencesOf(docs, r), (id) => (parts.store.get(id) as SentenceRecord).text).join(' '),
    meta: (r) => docs.meta[r] as Readonly<Record<string, unknown>>,
    keys: docs.keys,
    means: parts.vectors === undefined ? undefined : (progress) => meanVectors(docs, parts, progress),
    sentences:
      parts.vectors === undefined ? undefined : (rows, reuse) => sentenceRows(docs, parts, rows, reuse),
    release: parts.release,
    trim: parts.trim,
  };
}

/** Each document's partners from a pairs file (`docs align` output: JSON lines with `a` and `b`), both ways. */
export function readDocPairs(path: string): Map<string, string[]> {
  const pairs: Array<{ a: string; b: string }> = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      const r = docPairLine.safeParse(safeJson(line));
      if (!r.success) {
        throw new ParamineError(
          'BAD_FILE',
          `${path}:${i + 1}: expected {"a": DOC, "b": DOC} (docs align output)`,
          {
            field: 'docPairs.path',
          },
        );
      }
      pairs.push({ a: String(r.data.a), b: String(r.data.b) });
    });
  return partnersOf(pairs);
}

/** Each document's partners, both ways, from document pairs (a file's, or `alignDocuments`'). */
export function partnersOf(pairs: Iterable<{ a: string; b: string }>): Map<string, string[]> {
  const partners = new Map<string, string[]>();
  const add = (x: string, y: string) => {
    const list = partners.get(x);
    if (list === undefined) partners.set(x, [y]);
    else if (!list.includes(y)) list.push(y);
  };
  for (const { a, b } of pairs) {
    if (a === b) continue;
    add(a, b);
    add(b, a);
  }
  return partners;
}

const docPairLine = z.looseObject({
  a: z.union([z.string(), z.number()]),
  b: z.union([z.string(), z.number()]),
});

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

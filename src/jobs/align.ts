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
import type { GroupValue, GroupView, SentenceRecord, SentenceStore } from '../store/index.js';
import { type AlignOptions, type AlignOptionsInput, alignOptionsSchema } from './align-options.js';
import {
  type AlignHooks,
  type Alignment,
  type AlignShare,
  alignDocumentSet,
  alignShare,
  type DocumentSet,
} from './align-pairs.js';
import type { MeanChunk } from './align-vectors.js';

export { type AlignOptions, type AlignOptionsInput, alignOptionsSchema } from './align-options.js';
export type { Alignment, AlignShare, DocPair, SharePlan } from './align-pairs.js';

export interface AlignParts {
  /** The store with its updates' overlay (deleted sentences read as gone), and the groups with added members. */
  store: SentenceStore;
  groups: GroupView | undefined;
  vectors?: VectorFile | undefined;
  /** Sentences added since the build: their embeddings, as added (the mean method reads them). */
  added?: { readonly base: number; vectors(ids: readonly number[]): Float32Array } | undefined;
  /** Closes all of the above early, once the documents are read (DocumentSet.release); safe to call twice. */
  release?: (() => Promise<void>) | undefined;
}

interface Doc {
  id: GroupValue;
  sentences: number[];
  meta: Record<string, unknown>;
}

/** The documents of the index: its `docKey` groups, each with its sentence ids and first sentence's metadata. */
function documentsOf(parts: AlignParts, key: string): Doc[] {
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
  parts.groups.require(key, 'docKey');
  const docs: Doc[] = [];
  for (const { value } of parts.groups.groups(key)) {
    // Sentences deleted since the build are no part of their document any more.
    const sentences = parts.groups.ids(key, value).filter((id) => !parts.store.isDeleted(id));
    if (sentences.length === 0) continue;
    const first = parts.store.get(sentences[0] as number);
    docs.push({ id: value, sentences, meta: first?.meta ?? {} });
  }
  if (docs.length === 0) throw noDocuments(`no sentence of the index has a "${key}" value`);
  return docs;
}

function normalizeRows(m: Float32Array, dim: number): void {
  for (let r = 0; r < m.length / dim; r++) {
    const row = m.subarray(r * dim, (r + 1) * dim);
    let n = 0;
    for (const x of row) n += x * x;
    const inv = n > 0 ? 1 / Math.sqrt(n) : 0;
    for (let i = 0; i < dim; i++) row[i] = (row[i] as number) * inv;
  }
}

/** Documents whose built rows are read in one readIds call: one worker-thread gather, not a read a sentence. */
const MEAN_CHUNK = 4096;

async function* meanVectors(
  docs: Doc[],
  parts: AlignParts,
  progress?: (done: number, total: number) => void,
): AsyncGenerator<MeanChunk> {
  const vectors = parts.vectors as VectorFile;
  const dim = vectors.dim;
  for (let first = 0; first < docs.length; first += MEAN_CHUNK) {
    const chunk = docs.slice(first, first + MEAN_CHUNK);
    const m = new Float32Array(chunk.length * dim);
    const addTo = (k: number, v: Float32Array, at: number) => {
      const row = m.subarray(k * dim, (k + 1) * dim);
      for (let i = 0; i < dim; i++) row[i] = (row[i] as number) + (v[at + i] as number);
    };
    // Built sentences from vectors.f16; added ones (ids from the updates' base on) as they were embedded.
    const built = chunk.map((d) => d.sentences.filter((id) => id < vectors.count));
    const rows = await vectors.readIds(built.flat());
    let at = 0;
    for (const [k, d] of chunk.entries()) {
      for (let s = 0; s < (built[k] as number[]).length; s++, at += dim) addTo(k, rows, at);
      const added = d.sentences.filter((id) => id >= vectors.count);
      if (added.length === 0) continue;
      if (parts.added === undefined || added.some((id) => id < parts.added!.base)) {
        throw new ParamineError('BAD_INPUT', `method mean: no embedding kept for sentence ${added[0]}`, {
          field: 'method',
        });
      }
      const extra = parts.added.vectors(added);
      for (let s = 0; s < added.length; s++) addTo(k, extra, s * dim);
    }
    normalizeRows(m, dim);
    progress?.(first + chunk.length, docs.length);
    yield { dim, rows: m };
  }
}

/** Document pairs of the index's documents (its `docKey` groups) inside the band, at most `partners` each. */
export async function alignDocuments(
  parts: AlignParts,
  input: AlignOptionsInput,
  hooks: AlignHooks = {},
): Promise<Alignment> {
  const o = alignOptionsSchema.parse(input);
  return alignDocumentSet(documentSet(parts, o), o, hooks);
}

/** A worker's share of a distributed alignment of the index's documents (queue/align.ts). */
export async function documentsShare(
  parts: AlignParts,
  input: AlignOptionsInput,
  work: string,
): Promise<AlignShare> {
  const o = alignOptionsSchema.parse(input);
  return alignShare(documentSet(parts, o), o, work);
}

function documentSet(parts: AlignParts, o: AlignOptions): DocumentSet {
  const docs = documentsOf(parts, o.docKey);
  return {
    count: docs.length,
    id: (r) => String((docs[r] as Doc).id),
    text: (r) =>
      (docs[r] as Doc).sentences.map((id) => (parts.store.get(id) as SentenceRecord).text).join(' '),
    meta: (r) => (docs[r] as Doc).meta,
    means: parts.vectors === undefined ? undefined : (progress) => meanVectors(docs, parts, progress),
    release: parts.release,
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

/**
 * Document pairs (Turku's first phase, MRPC's news clusters): documents likely to share paraphrases, found
 * by document vectors and the same FAISS search as sentences, kept inside a similarity band (too similar is
 * the same text reformatted, too far is misaligned), optionally within a window on an ordered key and among
 * documents that share the values of some keys (a title, a subforum), at most `partners` per document.
 *
 * Document vectors, two ways (both measured, BENCHMARKS.md):
 *  - tfidf: character 2-4-gram TF-IDF within word boundaries, as Turku (sklearn's char_wb), hashed into
 *    `dim` buckets so that FAISS can search it (idf from the documents' bucket frequencies);
 *  - mean: the mean of the document's stored sentence embeddings (vectors.f16), normalized.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { cli } from '../config.js';
import { ParamineError } from '../errors.js';
import type { VectorFile } from '../index/index.js';
import { createIndex } from '../native/index.js';
import type { GroupValue, GroupView, SentenceRecord, SentenceStore } from '../store/index.js';
import { charNgramCounts } from '../text/index.js';
import { type AlignBand, alignBand, DEFAULT_BAND } from './align-band.js';
import {
  type CopyGroup,
  copyGroups,
  copyRepresentatives,
  type Neighbour,
  neighboursOf,
  representativeNeighbours,
} from './align-copies.js';

/** The options of `paramine docs align`, declared once with their flags (src/config.ts). */
export const alignOptionsSchema = z.object({
  method: z.enum(['tfidf', 'mean']).default('tfidf').register(cli, {
    flag: '--method <tfidf|mean>',
    description: 'document vectors: character n-gram TF-IDF (Turku) or the mean of the sentence embeddings',
  }),
  min: z
    .number()
    .min(-1)
    .max(1)
    .optional()
    .register(cli, {
      flag: '--min <score>',
      description: `the band: pairs at least this similar (lower: misaligned); default ${DEFAULT_BAND.min}, or with --auto-band the gap the data shows (align-band.ts)`,
    }),
  max: z
    .number()
    .min(-1)
    .max(1.01)
    .optional()
    .register(cli, {
      flag: '--max <score>',
      description: `the band: pairs below this (higher: the same text reformatted); default ${DEFAULT_BAND.max}, or with --auto-band the gap below a mode of near copies`,
    }),
  autoBand: z.boolean().default(false).register(cli, {
    flag: '--auto-band',
    description:
      "where --min / --max are not given, take the edges the nearest partners' scores propose (--report shows them); off by default: on a planted set the proposal did worse than the fixed band (docs/scopes.md)",
  }),
  partners: z.number().int().min(1).max(100).default(3).register(cli, {
    flag: '--partners <m>',
    description: 'most partner documents per document',
  }),
  docKey: z.string().min(1).default('doc').register(cli, {
    flag: '--doc-key <key>',
    description: 'the group key whose values are the documents',
  }),
  windowKey: z.string().min(1).optional().register(cli, {
    flag: '--window-key <key>',
    description: 'with --days: pairs only between documents whose dates under this key are that close',
  }),
  days: z
    .number()
    .positive()
    .optional()
    .register(cli, { flag: '--days <n>', description: 'the window, in days' }),
  same: z
    .array(z.string().min(1))
    .default([])
    .register(cli, {
      flag: '--same <keys>',
      description:
        'pairs only between documents with equal values of these keys (comma-separated: title,subforum)',
      parse: (v) => v.split(',').filter((k) => k !== ''),
    }),
  differ: z
    .array(z.string().min(1))
    .default([])
    .register(cli, {
      flag: '--differ <keys>',
      description:
        'pairs only between documents whose values of these keys differ (comma-separated: two outlets, two translations, two subtitle files)',
      parse: (v) => v.split(',').filter((k) => k !== ''),
    }),
  dim: z.number().int().min(64).max(65536).default(4096).register(cli, {
    flag: '--dim <n>',
    description: 'tfidf: hashed dimensions of the document vectors',
  }),
});
export type AlignOptionsInput = z.input<typeof alignOptionsSchema>;
export type AlignOptions = z.output<typeof alignOptionsSchema>;

export interface DocPair {
  a: string;
  b: string;
  score: number;
}

export interface AlignParts {
  /** The store with its updates' overlay (deleted sentences read as gone), and the groups with added members. */
  store: SentenceStore;
  groups: GroupView | undefined;
  vectors?: VectorFile | undefined;
  /** Sentences added since the build: their embeddings, as added (the mean method reads them). */
  added?: { readonly base: number; vectors(ids: readonly number[]): Float32Array } | undefined;
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

/** FNV-1a, 32 bits: a stable bucket for a gram. */
function bucket(gram: string, dim: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < gram.length; i++) h = Math.imul(h ^ gram.charCodeAt(i), 0x01000193);
  return (h >>> 0) % dim;
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

function tfidfVectors(docs: Doc[], store: SentenceStore, dim: number): Float32Array {
  const m = new Float32Array(docs.length * dim);
  const df = new Float64Array(dim);
  docs.forEach((d, r) => {
    const text = d.sentences.map((id) => (store.get(id) as SentenceRecord).text).join(' ');
    const row = m.subarray(r * dim, (r + 1) * dim);
    for (const [gram, count] of charNgramCounts(text)) {
      const b = bucket(gram, dim);
      row[b] = (row[b] as number) + count;
    }
    for (let i = 0; i < dim; i++) if ((row[i] as number) > 0) df[i] = (df[i] as number) + 1;
  });
  const n = docs.length;
  for (let r = 0; r < n; r++) {
    for (let i = 0; i < dim; i++) {
      const k = r * dim + i;
      if ((m[k] as number) > 0) m[k] = (m[k] as number) * (Math.log((1 + n) / (1 + (df[i] as number))) + 1);
    }
  }
  normalizeRows(m, dim);
  return m;
}

async function meanVectors(docs: Doc[], parts: AlignParts): Promise<Float32Array> {
  const vectors = parts.vectors as VectorFile;
  const dim = vectors.dim;
  const m = new Float32Array(docs.length * dim);
  for (const [r, d] of docs.entries()) {
    const row = m.subarray(r * dim, (r + 1) * dim);
    const add = (v: Float32Array) => {
      for (let i = 0; i < dim; i++) row[i] = (row[i] as number) + (v[i] as number);
    };
    // Built sentences from vectors.f16; added ones (ids from the updates' base on) as they were embedded.
    const built = d.sentences.filter((id) => id < vectors.count);
    const added = d.sentences.filter((id) => id >= vectors.count);
    for (const id of built) add(await vectors.read(id, 1));
    if (added.length > 0) {
      if (parts.added === undefined || added.some((id) => id < parts.added!.base)) {
        throw new ParamineError('BAD_INPUT', `method mean: no embedding kept for sentence ${added[0]}`, {
          field: 'method',
        });
      }
      const rows = parts.added.vectors(added);
      for (let k = 0; k < added.length; k++) add(rows.subarray(k * dim, (k + 1) * dim));
    }
  }
  normalizeRows(m, dim);
  return m;
}

const DAY_MS = 86_400_000;

/**
 * The keys the options name, checked against the documents' metadata: a typo (`--differ outlets`) would
 * otherwise filter nothing, or everything, without a word; a window needs dates and both of its halves.
 */
function checkKeys(docs: readonly Doc[], o: AlignOptions): void {
  if ((o.windowKey === undefined) !== (o.days === undefined)) {
    throw new ParamineError('BAD_INPUT', 'a window needs both --window-key and --days', {
      field: o.days === undefined ? 'days' : 'windowKey',
    });
  }
  const known = new Set(docs.flatMap((d) => Object.keys(d.meta)));
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
  if (key !== undefined && !docs.some((d) => Number.isFinite(Date.parse(String(d.meta[key]))))) {
    throw new ParamineError('BAD_INPUT', `no document has a date under "${key}" (e.g. 2024-05-01)`, {
      field: 'windowKey',
    });
  }
}

/** Whether two documents may pair: same values of `same`, different ones of `differ`, dates within the window. */
function compatible(a: Doc, b: Doc, o: AlignOptions): boolean {
  for (const k of o.same) if (a.meta[k] === undefined || a.meta[k] !== b.meta[k]) return false;
  for (const k of o.differ) if (a.meta[k] !== undefined && a.meta[k] === b.meta[k]) return false;
  if (o.windowKey !== undefined && o.days !== undefined) {
    const ta = Date.parse(String(a.meta[o.windowKey]));
    const tb = Date.parse(String(b.meta[o.windowKey]));
    if (!Number.isFinite(ta) || !Number.isFinite(tb) || Math.abs(ta - tb) > o.days * DAY_MS) return false;
  }
  return true;
}

export interface Alignment {
  /** Best first. */
  pairs: DocPair[];
  /** Near-copy groups (scores at or above the band's max): the document that stood for each in `pairs`. */
  copies: CopyGroup[];
  /** The band used, where its edges came from, and the nearest partners' histogram it was chosen on. */
  band: AlignBand;
}

/** Document pairs inside the band, at most `partners` per document, best first. */
export async function alignDocuments(parts: AlignParts, input: AlignOptionsInput): Promise<Alignment> {
  const o = alignOptionsSchema.parse(input);
  if (o.min !== undefined && o.max !== undefined && o.min >= o.max)
    throw new ParamineError('BAD_INPUT', 'the band is empty: give min below max', { field: 'min' });
  const docs = documentsOf(parts, o.docKey);
  if (docs.length < 2) return { pairs: [], band: alignBand([], o, o.autoBand), copies: [] };
  checkKeys(docs, o);
  if (o.method === 'mean' && parts.vectors === undefined) {
    throw new ParamineError(
      'BAD_INPUT',
      'method mean needs the kept embeddings (vectors.f16; build with --vectors f16)',
      {
        field: 'method',
      },
    );
  }
  const m = o.method === 'tfidf' ? tfidfVectors(docs, parts.store, o.dim) : await meanVectors(docs, parts);
  const dim = m.length / docs.length;
  // Room for the band and the scope to drop candidates before `partners` are found.
  const k = Math.min(docs.length, o.partners * 8 + 1);
  const all = docs.map((_, i) => i);
  const index = createIndex('Flat', dim, 'ip');
  let first: Neighbour[][];
  try {
    await index.add(
      m,
      BigInt64Array.from(all, (i) => BigInt(i)),
    );
    first = neighboursOf(await index.search(m, k), k, all);
  } finally {
    await index.close();
  }
  const fits = (n: Neighbour) => compatible(docs[n.i] as Doc, docs[n.j] as Doc, o);
  // The band is chosen on each document's nearest compatible neighbour.
  const nearest = first.flatMap((row) => row.find(fits)?.score ?? []);
  const band = alignBand(nearest, o, o.autoBand);
  if (band.min >= band.max) {
    throw new ParamineError('BAD_INPUT', `the band [${band.min}, ${band.max}) is empty: give min below max`, {
      field: o.min === undefined ? 'max' : 'min',
    });
  }
  const rep = copyRepresentatives(first, band.max);
  const reps = all.filter((i) => rep[i] === i);
  const neighbours = reps.length === docs.length ? first : await representativeNeighbours(m, dim, reps, k);
  const near = neighbours.flat().filter(fits);
  return {
    pairs: inBand(near, band, o.partners, (i) => String((docs[i] as Doc).id)),
    band,
    copies: copyGroups(rep, (i) => String((docs[i] as Doc).id)),
  };
}

/** The pairs inside [min, max), each once, best first, each document keeping at most `partners`. */
function inBand(
  near: Neighbour[],
  band: AlignBand,
  partners: number,
  idOf: (i: number) => string,
): DocPair[] {
  const pairs = new Map<string, Neighbour>();
  for (const p of near) {
    if (p.score < band.min || p.score >= band.max) continue;
    const key = p.i < p.j ? `${p.i}:${p.j}` : `${p.j}:${p.i}`;
    if (!pairs.has(key)) pairs.set(key, p);
  }
  const taken = new Map<number, number>();
  const out: DocPair[] = [];
  for (const p of [...pairs.values()].sort((x, y) => y.score - x.score)) {
    if ((taken.get(p.i) ?? 0) >= partners || (taken.get(p.j) ?? 0) >= partners) continue;
    taken.set(p.i, (taken.get(p.i) ?? 0) + 1);
    taken.set(p.j, (taken.get(p.j) ?? 0) + 1);
    out.push({ a: idOf(p.i), b: idOf(p.j), score: Math.round(p.score * 1e6) / 1e6 });
  }
  return out;
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

/**
 * Where a job's query sentences come from: a range of the index itself (texts from the store, vectors
 * from the index's kept embeddings, or re-encoded when it has none), inline sentences, or a corpus file
 * under the data directory. Every source answers "batch [start, start + count)" deterministically, so a
 * resumed job sees exactly the sentences it would have seen.
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { readSentences } from '../corpus/index.js';
import type { Embedder } from '../encode/index.js';
import { ParamineError } from '../errors.js';
import type { VectorFile } from '../index/index.js';
import type { Meta, SentenceRecord, SentenceStore } from '../store/index.js';
import { dedupKey, normalize } from '../text/index.js';
import type { JobScope } from './spec.js';

/** Query sentences a file scope may hold (they are kept in memory while the job runs). */
export const MAX_FILE_SENTENCES = 1_000_000;

export interface QueryBatch {
  texts: string[];
  /** Id in the index, or null for a sentence that is not in it. */
  ids: Array<number | null>;
  metas: Array<Meta | undefined>;
  vectors: Float32Array;
  /** Rows of sentences deleted since the build: they keep their place (progress counts them) but mine nothing. */
  deleted?: ReadonlySet<number>;
}

export interface QuerySource {
  readonly total: number;
  batch(start: number, count: number): Promise<QueryBatch>;
}

/** The sentences added to the index since its build (POST /v1/sentences, `paramine add`). */
export interface AddedSentences {
  /** Sentences in the build: added ids run from here. */
  readonly base: number;
  /** The id the next add gets. */
  readonly nextId: number;
  /** The first added id written at or after `since` (nextId when there is none). */
  firstSince(since: { seq: number } | { time: string } | { id: number }): number;
  /** Their embeddings (ids.length x dim), as they were added. */
  vectors(ids: readonly number[]): Float32Array;
  /** Their texts and metadata, ids in [from, to) ascending (deleted ones included). */
  sentences(from: number, to: number): Iterable<{ id: number; record: SentenceRecord }>;
}

export interface SourceParts {
  store: SentenceStore;
  encoder: Embedder;
  vectors?: VectorFile | undefined;
  /** The job's sentences: ids below this (the build's, and those added before the job started). */
  ntotal: number;
  /** Sentences added since the build, if any. */
  added?: AddedSentences | undefined;
  dataDir?: string | undefined;
}

/** Rows for these index ids: from the kept or added embeddings when there are some, else encoded again. */
export async function vectorsForIds(
  parts: SourceParts,
  ids: readonly number[],
  texts?: readonly string[],
): Promise<Float32Array> {
  const added = parts.added;
  if (added !== undefined && ids.some((id) => id >= added.base)) {
    // Added sentences' embeddings are in the updates; the built ones as usual, then put in place.
    const builtAt = ids.flatMap((id, i) => (id < added.base ? [i] : []));
    const addedAt = ids.flatMap((id, i) => (id >= added.base ? [i] : []));
    const built =
      builtAt.length === 0
        ? new Float32Array(0)
        : await vectorsForIds(
            { ...parts, added: undefined },
            builtAt.map((i) => ids[i] as number),
            texts && builtAt.map((i) => texts[i] as string),
          );
    const fresh = added.vectors(addedAt.map((i) => ids[i] as number));
    const dim = (built.length + fresh.length) / ids.length;
    const out = new Float32Array(ids.length * dim);
    builtAt.forEach((i, j) => {
      out.set(built.subarray(j * dim, (j + 1) * dim), i * dim);
    });
    addedAt.forEach((i, j) => {
      out.set(fresh.subarray(j * dim, (j + 1) * dim), i * dim);
    });
    return out;
  }
  if (parts.vectors) return parts.vectors.readIds(ids);
  const t = texts ?? (await parts.store.getMany(ids)).map((r) => r?.text ?? '');
  return parts.encoder.encode([...t]);
}

/** A batch of index sentences: texts and metadata from the store, vectors as vectorsForIds gives them. */
export async function indexBatch(parts: SourceParts, ids: number[]): Promise<QueryBatch> {
  const records = await parts.store.getMany(ids);
  const deleted = new Set<number>();
  const texts = records.map((r, i) => {
    if (r !== undefined) return r.text;
    if (!parts.store.isDeleted(ids[i] as number)) {
      throw new ParamineError('BAD_FILE', `sentence ${ids[i]} is missing from the store`);
    }
    deleted.add(i);
    return '';
  });
  const vectors = await vectorsForIds(parts, ids, texts);
  return {
    texts,
    ids,
    metas: records.map((r) => r?.meta),
    vectors,
    ...(deleted.size > 0 ? { deleted } : {}),
  };
}

export async function openQuerySource(scope: JobScope, parts: SourceParts): Promise<QuerySource> {
  if (scope.kind === 'all' || scope.kind === 'range') {
    const first = scope.kind === 'range' ? scope.start : 0;
    const end = scope.kind === 'range' ? scope.end : parts.ntotal;
    if (end > parts.ntotal) {
      throw new ParamineError('BAD_INPUT', `scope.end ${end} is past the index's ${parts.ntotal} sentences`, {
        field: 'scope.end',
      });
    }
    return {
      total: end - first,
      async batch(start, count) {
        return indexBatch(
          parts,
          Array.from({ length: count }, (_, i) => first + start + i),
        );
      },
    };
  }
  const texts =
    scope.kind === 'sentences' ? inlineTexts(scope.sentences) : await fileTexts(scope.path, parts.dataDir);
  return {
    total: texts.length,
    async batch(start, count) {
      const part = texts.slice(start, start + count);
      // A query sentence that is in the index takes its id: it is not paired with itself, and a-b = b-a.
      const ids = part.map((t) => parts.store.idForKey(dedupKey(t)) ?? null);
      return {
        texts: part,
        ids,
        metas: part.map(() => undefined),
        vectors: await parts.encoder.encode(part),
      };
    },
  };
}

function inlineTexts(sentences: readonly string[]): string[] {
  return sentences.map((s, i) => {
    const t = normalize(s);
    if (t === '') {
      throw new ParamineError('BAD_INPUT', 'must not be empty after normalization', {
        field: `scope.sentences[${i}]`,
      });
    }
    return t;
  });
}

/** Resolves a data-directory-relative path; anything outside it (.., absolute, symlinks out) is refused. */
export function resolveDataPath(path: string, dataDir: string | undefined, field = 'scope.path'): string {
  if (dataDir === undefined) {
    throw new ParamineError('BAD_INPUT', 'files in a job need the service to be started with --data-dir', {
      field,
    });
  }
  const root = realpathSync(dataDir);
  const outside = (p: string) => {
    const r = relative(root, p);
    return r === '' || r.startsWith('..') || isAbsolute(r);
  };
  const full = resolve(root, path);
  if (isAbsolute(path) || outside(full)) {
    throw new ParamineError('BAD_INPUT', `${field} must be a file inside the data directory`, {
      field,
    });
  }
  let real: string;
  try {
    real = realpathSync(full);
  } catch {
    throw new ParamineError('FILE_NOT_FOUND', `${path} does not exist in the data directory`, { field });
  }
  if (outside(real)) {
    throw new ParamineError('BAD_INPUT', `${field} must be a file inside the data directory`, { field });
  }
  return real;
}

async function fileTexts(path: string, dataDir: string | undefined): Promise<string[]> {
  const file = resolveDataPath(path, dataDir);
  const out: string[] = [];
  for await (const rec of readSentences([file], { onBadRecord: 'skip' })) {
    if ('error' in rec) continue;
    const t = normalize(rec.text);
    if (t === '') continue;
    if (out.length === MAX_FILE_SENTENCES) {
      throw new ParamineError(
        'BAD_INPUT',
        `${path} holds more than ${MAX_FILE_SENTENCES} sentences; split it`,
        {
          field: 'scope.path',
        },
      );
    }
    out.push(t);
  }
  if (out.length === 0)
    throw new ParamineError('BAD_INPUT', `${path} holds no sentences`, { field: 'scope.path' });
  return out;
}

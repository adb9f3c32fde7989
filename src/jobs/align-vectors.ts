/**
 * What `docs align` searches and scores, from its documents: the sparse TF-IDF of their character n-grams (its
 * projection searched, its exact cosine scoring the candidates, rare n-grams' lists adding some), the mean
 * sentence embeddings (method mean), or both (hybrid).
 */
import { createHash } from 'node:crypto';
import { sha256 } from '../durable.js';
import { gatherRows } from '../index/index.js';
import { ModelWorker, workerEntry } from '../models/worker.js';
import { Turns } from '../turns.js';
import { type CountedGrams, countGrams, DocGrams } from './align-grams.js';
import { jointVectors, meanRows, readMeans } from './align-hybrid.js';
import type { AlignOptions } from './align-options.js';
import { RARE_DEPTH, RareGrams } from './align-rare.js';
import { pairScore, type ScoreShare } from './align-score.js';
import type { DocVectors, MoreCandidates, NearestStage, NeighbourOptions } from './align-search.js';
import type { ReadSentences } from './align-sentences.js';

/** Consecutive documents' mean embeddings: rows.length / dim of them. */
export interface MeanChunk {
  dim: number;
  rows: Float32Array;
}

/** Documents to align: row r's id, text (tfidf) and metadata (the scope keys). */
export interface DocumentSet {
  readonly count: number;
  id(r: number): string;
  text(r: number): string;
  meta(r: number): Readonly<Record<string, unknown>>;
  /**
   * Every key of the documents' metadata, where meta(r) holds only the keys the options name (checkKeys'
   * message lists them); absent: read from meta(r).
   */
  keys?: ReadonlySet<string> | undefined;
  /**
   * The mean embeddings (methods mean and hybrid): each row a normalized mean of the document's sentence
   * embeddings, in order, a chunk of consecutive documents at a time (hybrid keeps them as int8 as they
   * come, never all as floats: 1.5 GB at 10^6 documents).
   */
  means?: ((progress?: (done: number, total: number) => void) => AsyncIterable<MeanChunk>) | undefined;
  /**
   * The sentences' embeddings of some documents (method hybrid's sentence match, align-sentences.ts): read
   * at the end, for each document's few best candidates.
   */
  sentences?: ReadSentences | undefined;
  /**
   * Called once every text and mean is read: what they were read from may be closed (ids and metadata
   * are all the alignment reads after). `docs align` closes its index's store there, whose mapped pages
   * (~1 GB at 10^6 documents) would stay in its resident set to the end.
   */
  release?: (() => Promise<void>) | undefined;
  /**
   * Called every few slices of texts read: what they were read from may let go of the pages read so far
   * (`docs align` drops the pages of its store's map, which would otherwise grow to the whole store, ~1 GB
   * at 10^6 documents, as the n-grams are counted).
   */
  trim?: (() => void) | undefined;
}

/**
 * Progress of a long alignment: n-grams counted, the index trained and filled, documents searched and scored,
 * then each list offered its neighbours' lists (~6% of the search's time at 10^6), then (hybrid, where the
 * sentences' embeddings are kept) each list's best candidates matched sentence by sentence.
 */
export type AlignProgress = (
  stage: 'means' | 'grams' | NearestStage | 'neighbours' | 'sentences',
  done: number,
  total: number,
  /** Done by a run cut short and read back (align-checkpoint.ts). */
  readBack?: boolean,
) => void;

/** Documents read and counted at a time (the counting thread's unit of work). */
const SLICE = 4096;

/** Slices of texts read between two DocumentSet.trim calls (~35 MB of a store's pages at a few sentences each). */
const TRIM_EVERY = 8;

/** Documents from which a worker thread counts the n-grams while this one reads the texts and keeps the rows. */
export const GRAMS_THREAD_FROM = 2 * SLICE;

/**
 * The documents' sparse TF-IDF, their texts read once (and hashed: the checkpoint's fingerprint). From
 * `threadFrom` documents a worker thread counts each slice's n-grams while this thread reads the next slice
 * and adds the last one's rows, in order: the same rows, on two cores (one took 124 s at 10^6 documents).
 */
export async function docGrams(
  set: DocumentSet,
  progress?: AlignProgress,
  threadFrom = GRAMS_THREAD_FROM,
): Promise<{ grams: DocGrams; digest: string }> {
  const grams = new DocGrams();
  const hash = createHash('sha256');
  const thread =
    set.count >= threadFrom
      ? await ModelWorker.start<null>(workerEntry(import.meta.url, 'align-grams-worker'), null)
      : undefined;
  const count = (texts: string[]) =>
    thread === undefined ? Promise.resolve(countGrams(texts)) : thread.call<CountedGrams>('count', texts);
  let added = 0;
  const turns = new Turns();
  const add = async (counted: Promise<CountedGrams> | undefined) => {
    if (counted === undefined) return;
    const { entries, ends } = await counted;
    let start = 0;
    for (const end of ends) {
      grams.addCounted(entries.subarray(start, end));
      start = end;
      if (turns.due) await turns.pass();
    }
    added += ends.length;
    if (added % SLICE === 0) progress?.('grams', added, set.count);
  };
  let last: Promise<CountedGrams> | undefined;
  try {
    for (let first = 0; first < set.count; first += SLICE) {
      const texts: string[] = [];
      for (let r = first; r < Math.min(set.count, first + SLICE); r++) {
        const text = set.text(r);
        hash.update(text).update('\0');
        texts.push(text);
        if (turns.due) await turns.pass();
      }
      if ((first / SLICE) % TRIM_EVERY === TRIM_EVERY - 1) set.trim?.();
      // This slice is counted (there) while the last one's rows are added (here).
      const next = count(texts);
      next.catch(() => undefined);
      await add(last);
      last = next;
    }
    await add(last);
  } finally {
    await thread?.close();
  }
  await grams.finish(turns);
  return { grams, digest: hash.digest('hex') };
}

/** What the candidate search reads, and (tfidf) the exact score that ranks its candidates. */
export async function documentVectors(
  set: DocumentSet,
  o: AlignOptions,
  progress: AlignProgress | undefined,
  joint: boolean,
): Promise<{
  vectors: DocVectors;
  rescore?: NeighbourOptions['rescore'];
  more?: MoreCandidates;
  /** What a worker thread reads to score as `rescore` does: the same shared rows. */
  share?: () => ScoreShare;
  digest: string;
}> {
  if (o.method !== 'mean') {
    // Hybrid: the embeddings' means first, each chunk kept as int8 as it is read, then the n-grams.
    const means = o.method === 'hybrid' ? await meanRows(set, o.method, progress) : undefined;
    const { grams, digest } = await docGrams(set, progress);
    await set.release?.();
    const rare = await RareGrams.build(grams);
    const project = (ids: ArrayLike<number>, dim: number) => grams.project(ids, dim);
    // One view of the finished rows for this thread's scorer and a worker's (it copies the rows' places).
    const shared: ScoreShare = { grams: grams.share(), means: means?.rows.share() };
    return {
      vectors: inTurns(
        joint && means !== undefined
          ? jointVectors(project, o.dim, means.rows)
          : { dim: o.dim, rows: (ids) => project(ids, o.dim) },
      ),
      rescore: pairScore(shared),
      share: () => shared,
      more: { depth: RARE_DEPTH, candidates: (i, out) => rare.candidates(i, out) },
      digest: means === undefined ? digest : sha256(`${digest}\n${means.digest}`),
    };
  }
  const { m, digest } = await readMeans(set, o.method, progress);
  await set.release?.();
  const dim = m.length / set.count;
  return { vectors: { dim, rows: (ids) => gatherRows(m, Array.from(ids), dim) }, digest };
}

/** Rows made a few at a time between which the loop is let go (a batch of 16,384 projected: ~0.3 s). */
const ROWS_AT_ONCE = 256;

/** `v` (whose rows() works synchronously) in turns (turns.ts). */
function inTurns(v: DocVectors): DocVectors {
  return {
    dim: v.dim,
    rows: async (ids) => {
      const turns = new Turns();
      const all = ids instanceof Int32Array ? ids : Int32Array.from(ids);
      const out = new Float32Array(all.length * v.dim);
      for (let at = 0; at < all.length; at += ROWS_AT_ONCE) {
        out.set(await v.rows(all.subarray(at, at + ROWS_AT_ONCE)), at * v.dim);
        await turns.take();
      }
      return out;
    },
  };
}

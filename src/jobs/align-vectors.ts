/**
 * What `docs align` searches and scores, from its documents: the sparse TF-IDF of their character n-grams (its
 * projection searched, its exact cosine scoring the candidates, rare n-grams' lists adding some), the mean
 * sentence embeddings (method mean), or both (hybrid).
 */
import { createHash } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { sha256 } from '../durable.js';
import { gatherRows } from '../index/index.js';
import { DocGrams } from './align-grams.js';
import { hybridScore, jointVectors, meanRows, readMeans } from './align-hybrid.js';
import type { AlignOptions } from './align-options.js';
import { RARE_DEPTH, RareGrams } from './align-rare.js';
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

/** Rows between which the event loop is let go (a server runs jobs beside its searches). */
const SLICE = 4096;

/** The documents' sparse TF-IDF, their texts read once (and hashed: the checkpoint's fingerprint). */
async function docGrams(
  set: DocumentSet,
  progress?: AlignProgress,
): Promise<{ grams: DocGrams; digest: string }> {
  const grams = new DocGrams();
  const hash = createHash('sha256');
  for (let r = 0; r < set.count; r++) {
    const text = set.text(r);
    grams.add(text);
    hash.update(text).update('\0');
    if (r % SLICE === SLICE - 1) {
      progress?.('grams', r + 1, set.count);
      await yieldToLoop();
    }
  }
  grams.finish();
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
  digest: string;
}> {
  if (o.method !== 'mean') {
    // Hybrid: the embeddings' means first, each chunk kept as int8 as it is read, then the n-grams.
    const means = o.method === 'hybrid' ? await meanRows(set, o.method, progress) : undefined;
    const { grams, digest } = await docGrams(set, progress);
    await set.release?.();
    const rare = RareGrams.build(grams);
    const tfidf = (i: number, js: Int32Array, out: Float32Array) => grams.cosines(i, js, out);
    const project = (ids: ArrayLike<number>, dim: number) => grams.project(ids, dim);
    return {
      vectors:
        joint && means !== undefined
          ? jointVectors(project, o.dim, means.rows)
          : { dim: o.dim, rows: (ids) => project(ids, o.dim) },
      rescore: means === undefined ? tfidf : hybridScore(tfidf, means.rows),
      more: { depth: RARE_DEPTH, candidates: (i, out) => rare.candidates(i, out) },
      digest: means === undefined ? digest : sha256(`${digest}\n${means.digest}`),
    };
  }
  const { m, digest } = await readMeans(set, o.method, progress);
  await set.release?.();
  const dim = m.length / set.count;
  return { vectors: { dim, rows: (ids) => gatherRows(m, Array.from(ids), dim) }, digest };
}

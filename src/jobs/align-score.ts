/**
 * The exact score of candidate pairs (TF-IDF's cosine, or hybrid's mean of it and the mean embeddings'), on
 * this thread or on a worker thread that reads the same rows in shared memory: the pass over neighbours'
 * lists (align-hops.ts) scores half its rows there, so both cores score (it ran on one: 214 s of a 1,910-s
 * alignment of 10^6 documents).
 */
import { ModelWorker, workerEntry } from '../models/worker.js';
import { GramScorer } from '../native/index.js';
import type { DocGrams, SharedDocGrams } from './align-grams.js';
import { hybridScore, type Int8Rows, type SharedInt8Rows } from './align-hybrid.js';

/** Exact scores of document i with each of js into out (-1 ids skipped, their entries left as they are). */
export type PairScore = (i: number, js: Int32Array, out: Float32Array) => void;

/** What a scoring thread reads: the finished TF-IDF rows, and (hybrid) the mean embeddings. */
export interface ScoreShare {
  grams: SharedDocGrams;
  means?: SharedInt8Rows | undefined;
}

/**
 * The score of tfidf (no means) or hybrid as the alignment computes it, on this thread and the worker's: in C++
 * over the shared rows (GramScorer), 1.4x the JavaScript's speed (referenceScore) with the same floats.
 */
export function pairScore(share: ScoreShare): PairScore {
  const scorer = GramScorer.create(share.grams.rows, share.grams.idf, share.grams.invNorm, share.means);
  return (i, js, out) => scorer.score(i, js, out);
}

/** The same score in JavaScript (DocGrams.cosines, hybridScore): the reference pairScore is checked against. */
export function referenceScore(grams: DocGrams, means?: Int8Rows): PairScore {
  const tfidf: PairScore = (i, js, out) => grams.cosines(i, js, out);
  return means === undefined ? tfidf : hybridScore(tfidf, means);
}

/** Rows to score: row r is document is[r] with candidates js[r * width ..] (-1 padded). */
export interface ScoreRows {
  is: Int32Array;
  js: Int32Array;
  width: number;
}

/** Each row scored by `score` into a new array (entries of -1 ids: -2; rows with none are not scored). */
export function scoreRows(score: PairScore, { is, js, width }: ScoreRows): Float32Array<ArrayBuffer> {
  const out = new Float32Array(js.length).fill(-2);
  for (let r = 0; r < is.length; r++) {
    const at = r * width;
    if ((js[at] as number) < 0) continue;
    score(is[r] as number, js.subarray(at, at + width), out.subarray(at, at + width));
  }
  return out;
}

/** A worker thread scoring rows (align-score-worker.ts). */
export class ScoreThread {
  private constructor(private readonly worker: ModelWorker<null>) {}

  static async start(share: ScoreShare): Promise<ScoreThread> {
    return new ScoreThread(
      await ModelWorker.start(workerEntry(import.meta.url, 'align-score-worker'), share),
    );
  }

  /** The rows scored there (scoreRows). */
  score(rows: ScoreRows): Promise<Float32Array> {
    // Copies of the views: a view would take its whole buffer along.
    return this.worker.call('score', { is: rows.is.slice(), js: rows.js.slice(), width: rows.width });
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}

/**
 * The sentence match (method hybrid's last step, as Thompson & Koehn 2020 re-score document candidates by
 * aligning their sentences): each of a document's best candidates scored by how well their sentences pair
 * up, BERTScore's greedy matching with sentences for tokens: every sentence's best cosine on the other side,
 * averaged each way, their harmonic mean. Two documents that share paraphrases score high on those
 * sentences whatever else they hold; two on one topic, or sharing a few word runs, pair no sentence well.
 * Symmetric, so a pair's score does not depend on which side's list found it. The pass runs on the few best
 * candidates of each list only (MATCH_DEPTH): reading their sentences' embeddings costs a read each.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { NeighbourOptions, Neighbours } from './align-search.js';

/** Some documents' sentence embeddings (normalized): document x's are rows starts[x] to starts[x + 1]. */
export interface SentenceRows {
  dim: number;
  starts: Int32Array;
  rows: Float32Array;
}

/**
 * The sentences of documents (numbers of the DocumentSet), in the order asked; their rows written into
 * `reuse` where it has room (roomFor): a buffer whose rows the caller is done with.
 */
export type ReadSentences = (docs: readonly number[], reuse?: Float32Array) => Promise<SentenceRows>;

/**
 * `length` floats of `reuse` where it holds that many, else of a new buffer with a quarter more room, so
 * that chunk after chunk reuses a few buffers: a new one a chunk (~20 MB at 10^6 documents) left the
 * collector 0.2-0.3 GB behind, which set the alignment's high-water mark (docs/benchmarks/documents.md).
 */
export function roomFor(reuse: Float32Array | undefined, length: number): Float32Array {
  if (reuse !== undefined && reuse.length >= length) return reuse.subarray(0, length);
  return new Float32Array(Math.ceil(length * 1.25)).subarray(0, length);
}

/** Candidates of each list re-scored by the match; the rest of the list is dropped. */
export const MATCH_DEPTH = 4;
/** Sentences a document brings to the match at most (evenly spread over it): the match is m x n cosines. */
export const MATCH_SENTENCES = 32;

/** The score a re-scored pair keeps: the mean of its hybrid score and its sentences' match. */
const combine = (base: number, match: number): number => (base + match) / 2;

/** Rows p and q's dot product, four sums at once (1.3x one sum's speed; a destructured start halves it). */
function dotAt(rows: Float32Array, p: number, q: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let d = 0;
  for (; d + 3 < dim; d += 4) {
    s0 += (rows[p + d] as number) * (rows[q + d] as number);
    s1 += (rows[p + d + 1] as number) * (rows[q + d + 1] as number);
    s2 += (rows[p + d + 2] as number) * (rows[q + d + 2] as number);
    s3 += (rows[p + d + 3] as number) * (rows[q + d + 3] as number);
  }
  for (; d < dim; d++) s0 += (rows[p + d] as number) * (rows[q + d] as number);
  return s0 + s1 + s2 + s3;
}

/** The match of documents x and y of `s`: greedy best pairs each way, their harmonic mean (0 if none). */
export function sentenceMatch(s: SentenceRows, x: number, y: number): number {
  const { dim, starts, rows } = s;
  const [a0, b0] = [starts[x] as number, starts[y] as number];
  const m = (starts[x + 1] as number) - a0;
  const n = (starts[y + 1] as number) - b0;
  if (m === 0 || n === 0) return 0;
  const bestB = new Float64Array(n).fill(-1);
  let recall = 0;
  for (let i = 0; i < m; i++) {
    const p = (a0 + i) * dim;
    let best = -1;
    for (let j = 0; j < n; j++) {
      const q = (b0 + j) * dim;
      const dot = dotAt(rows, p, q, dim);
      if (dot > best) best = dot;
      if (dot > (bestB[j] as number)) bestB[j] = dot;
    }
    recall += best;
  }
  let precision = 0;
  for (const b of bestB) precision += b;
  const [r, p] = [Math.max(0, recall / m), Math.max(0, precision / n)];
  return r + p > 0 ? (2 * r * p) / (r + p) : 0;
}

/** Rows of `found` whose candidates' sentences are read at once (~MATCH_DEPTH + 1 documents each). */
export const MATCH_CHUNK = 1024;

export interface MatchOptions {
  /** Rows to re-score (all when not given). */
  rows?: ArrayLike<number>;
  /** Pairs a list may keep (the scope): the match runs on the first MATCH_DEPTH that fit. */
  fits: (i: number, j: number) => boolean;
  /**
   * The rows' scores are not their exact base scores (entries were added since the last pass): each is
   * scored again by this first.
   */
  base?: NonNullable<NeighbourOptions['rescore']>;
  onProgress?: (done: number, total: number) => void;
}

/**
 * Each row of `found` (exact base scores, best first) made the best MATCH_DEPTH candidates that fit, scored by
 * the mean of their base score and sentence match, best first; the rest of the row is emptied.
 */
export async function matchSentences(
  found: Neighbours,
  read: ReadSentences,
  { rows, fits, base, onProgress }: MatchOptions,
): Promise<void> {
  const { docs, k, ids, scores } = found;
  const total = rows?.length ?? docs.length;
  const rowAt = (x: number) => (rows === undefined ? x : (rows[x] as number));
  const depth = Math.min(k, MATCH_DEPTH);
  const { cand, baseScore } = pick(found, total, rowAt, depth, fits, base);
  // Each pair matched once: most pairs are in both sides' lists, and the lower document's list matches them.
  const slotOf = new Int32Array(docs.reduce((m, d) => Math.max(m, d + 1), 0)).fill(-1);
  for (let x = 0; x < total; x++) slotOf[docs[rowAt(x)] as number] = x;
  /** Where j's list in this pass holds i (-1: nowhere). */
  const other = (j: number, i: number) => {
    const y = slotOf[j] ?? -1;
    return y < 0 ? -1 : cand.subarray(y * depth, (y + 1) * depth).indexOf(i);
  };
  /**
   * Rows [first, last)'s pairs to match (entries of `cand`), and their documents' sentences (being read, into
   * `reuse`: rows already matched).
   */
  const gather = (first: number, last: number, reuse: Float32Array | undefined): Chunk => {
    const slot = new Map<number, number>();
    const wanted: number[] = [];
    const want = (d: number) => {
      if (!slot.has(d)) slot.set(d, wanted.push(d) - 1);
      return slot.get(d) as number;
    };
    const mine: number[] = [];
    const [a, b]: [number[], number[]] = [[], []];
    for (let x = first; x < last; x++) {
      const i = docs[rowAt(x)] as number;
      for (let h = 0; h < depth; h++) {
        const j = cand[x * depth + h] as number;
        if (j < 0) break;
        if (j < i && other(j, i) >= 0) continue;
        a.push(want(i));
        b.push(want(j));
        mine.push(x * depth + h);
      }
    }
    const reading = read(wanted, reuse);
    // Read while the chunk before is matched: a failure is thrown where it is awaited.
    reading.catch(() => undefined);
    return { mine, a: Int32Array.from(a), b: Int32Array.from(b), reading, last };
  };
  const match = await matchChunks(total, depth, gather, onProgress);
  for (let x = 0; x < total; x++) {
    const r = rowAt(x);
    const i = docs[r] as number;
    const list: Array<[number, number]> = [];
    for (let h = 0; h < depth; h++) {
      const j = cand[x * depth + h] as number;
      if (j < 0) break;
      const back = j < i ? other(j, i) : -1;
      const m =
        back >= 0
          ? (match[(slotOf[j] as number) * depth + back] as number)
          : (match[x * depth + h] as number);
      list.push([j, combine(baseScore[x * depth + h] as number, m)]);
    }
    list.sort((u, v) => v[1] - u[1]);
    ids.fill(-1, r * k, (r + 1) * k);
    scores.fill(0, r * k, (r + 1) * k);
    list.forEach(([j, score], h) => {
      ids[r * k + h] = j;
      scores[r * k + h] = score;
    });
  }
}

/** A chunk of rows' pairs to match (entries of `cand`: a's document against b's), their sentences being read. */
interface Chunk {
  mine: number[];
  a: Int32Array;
  b: Int32Array;
  reading: Promise<SentenceRows>;
  /** The row after the chunk's last. */
  last: number;
}

/**
 * The sentence match of every pair of `total` rows' chunks (`gather`), by entry of `cand`; each chunk's
 * sentences read while the chunk before is matched, into that chunk's buffer once it is matched.
 */
async function matchChunks(
  total: number,
  depth: number,
  gather: (first: number, last: number, reuse: Float32Array | undefined) => Chunk,
  onProgress: MatchOptions['onProgress'],
): Promise<Float32Array> {
  const match = new Float32Array(total * depth);
  let next = total > 0 ? gather(0, Math.min(total, MATCH_CHUNK), undefined) : undefined;
  /** The buffer of the chunk matched last: the one after next is read into it. */
  let spare: Float32Array | undefined;
  while (next !== undefined) {
    const { mine, a, b, reading, last } = next;
    const sentences = await reading;
    // The next chunk's sentences are read (the addon's thread) while this one is matched (here): 1.3x.
    next = last < total ? gather(last, Math.min(total, last + MATCH_CHUNK), spare) : undefined;
    for (let e = 0; e < mine.length; e++) {
      match[mine[e] as number] = sentenceMatch(sentences, a[e] as number, b[e] as number);
    }
    const { rows } = sentences;
    spare = new Float32Array(rows.buffer, rows.byteOffset, (rows.buffer.byteLength - rows.byteOffset) >> 2);
    onProgress?.(last, total);
    await yieldToLoop();
  }
  return match;
}

/** Each row's first `depth` candidates that fit (-1: none) and their base scores (read afresh with `base`). */
function pick(
  found: Neighbours,
  total: number,
  rowAt: (x: number) => number,
  depth: number,
  fits: MatchOptions['fits'],
  base: MatchOptions['base'],
): { cand: Int32Array; baseScore: Float32Array } {
  const { docs, k, ids, scores } = found;
  const cand = new Int32Array(total * depth).fill(-1);
  const baseScore = new Float32Array(total * depth);
  const js = new Int32Array(k);
  const exact = new Float32Array(k);
  for (let x = 0; x < total; x++) {
    const r = rowAt(x);
    const i = docs[r] as number;
    let m = 0;
    for (let h = 0; h < k && m < depth; h++) {
      const j = ids[r * k + h] as number;
      if (j < 0 || !fits(i, j)) continue;
      cand[x * depth + m] = j;
      baseScore[x * depth + m++] = scores[r * k + h] as number;
    }
    if (base === undefined || m === 0) continue;
    js.fill(-1);
    js.set(cand.subarray(x * depth, x * depth + m));
    exact.fill(-2);
    base(i, js, exact);
    baseScore.set(exact.subarray(0, m), x * depth);
  }
  return { cand, baseScore };
}

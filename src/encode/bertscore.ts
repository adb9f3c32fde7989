/**
 * BERTScore (Zhang et al. 2020) from the encoder's contextual token vectors: each token of one sentence
 * is matched to its most similar token of the other (cosine of unit vectors), precision and recall
 * average those maxima (idf-weighted when weights are given), F1 is their harmonic mean. Template tokens
 * ([CLS], [SEP]) are left out by EncoderCore.encodeTokens. Symmetric: F1(a, b) = F1(b, a).
 */
import type { TokenVectors } from './core.js';

export interface BertScore {
  precision: number;
  recall: number;
  f1: number;
}

/** Per-token weights: idf(id) = ln((M + 1) / (df(id) + 1)) over M documents (bert_score's formula). */
export class IdfWeights {
  readonly documents: number;
  private readonly df: Map<number, number>;

  constructor(documents: number, df: Map<number, number>) {
    this.documents = documents;
    this.df = df;
  }

  /** Document frequencies of token ids, each document's ids counted once. */
  static fromDocuments(docs: Iterable<ArrayLike<number>>): IdfWeights {
    const df = new Map<number, number>();
    let n = 0;
    for (const ids of docs) {
      n++;
      for (const id of new Set(Array.from(ids))) df.set(id, (df.get(id) ?? 0) + 1);
    }
    return new IdfWeights(n, df);
  }

  static fromJSON(j: { documents: number; df: Record<string, number> }): IdfWeights {
    return new IdfWeights(j.documents, new Map(Object.entries(j.df).map(([k, v]) => [Number(k), v])));
  }

  toJSON(): { documents: number; df: Record<string, number> } {
    return { documents: this.documents, df: Object.fromEntries(this.df) };
  }

  weight(id: number): number {
    return Math.log((this.documents + 1) / ((this.df.get(id) ?? 0) + 1));
  }
}

/** BERTScore of texts i and j of `t` (indices into t.offsets). */
export function bertScore(t: TokenVectors, i: number, j: number, idf?: IdfWeights): BertScore {
  const d = t.dim;
  const a0 = t.offsets[i]!;
  const a1 = t.offsets[i + 1]!;
  const b0 = t.offsets[j]!;
  const b1 = t.offsets[j + 1]!;
  if (a1 === a0 || b1 === b0) return { precision: 0, recall: 0, f1: 0 };
  const v = t.vectors;
  const bestB = new Float64Array(b1 - b0).fill(Number.NEGATIVE_INFINITY);
  let pSum = 0;
  let pW = 0;
  for (let x = a0; x < a1; x++) {
    let best = Number.NEGATIVE_INFINITY;
    for (let y = b0; y < b1; y++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += v[x * d + k]! * v[y * d + k]!;
      if (s > best) best = s;
      if (s > bestB[y - b0]!) bestB[y - b0] = s;
    }
    const w = idf ? idf.weight(t.ids[x]!) : 1;
    pSum += w * best;
    pW += w;
  }
  let rSum = 0;
  let rW = 0;
  for (let y = b0; y < b1; y++) {
    const w = idf ? idf.weight(t.ids[y]!) : 1;
    rSum += w * bestB[y - b0]!;
    rW += w;
  }
  const precision = pW > 0 ? pSum / pW : 0;
  const recall = rW > 0 ? rSum / rW : 0;
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { precision, recall, f1 };
}

/**
 * Character n-gram TF-IDF cosine (Kanerva et al., Turku: "char n-gram TF-IDF cosine").
 *
 * Follows scikit-learn's TfidfVectorizer with its defaults except ngram_range, i.e.
 * TfidfVectorizer(analyzer='char_wb', ngram_range=(2, 4)) — lowercase=True, norm='l2',
 * use_idf=True, smooth_idf=True, sublinear_tf=False — then the dot product of the two rows:
 *  - n-grams: charngrams.ts — normalize()d and lower-cased text, code points, analyzer
 *    'char_wb' (default: within space-padded words) or 'char' (across the whole text);
 *  - tf = raw count in the text (1 + ln(tf) with sublinearTf);
 *  - idf = ln((1 + N) / (1 + df)) + 1 (smooth_idf), N documents, df documents containing the gram;
 *  - vector = tf · idf, L2-normalized; cosine = dot product (clamped to ≤ 1 against rounding);
 *    an empty vector gives cosine 0, as sklearn's cosine_similarity.
 * On normalized input this equals sklearn to ~1e-15 (test/text/text-tfidf.test.ts has the reference values).
 *
 * Two ways to get the IDF:
 *  - charNgramCosine(a, b): a single pair. idf 'none' (default): uniform IDF — plain L2-normalized
 *    char n-gram count cosine, sklearn with use_idf=False. idf 'pair': IDF fitted on the two texts
 *    alone, sklearn fit_transform([a, b]) (a gram in both gets idf 1, in one ln(3/2)+1 ≈ 1.405,
 *    so shared grams weigh less: it only ranks pairs against each other loosely). The service uses
 *    the default: it needs no corpus and is stable across requests.
 *  - CharNgramTfidf: fitted on a corpus (document frequencies), then scores pairs; as sklearn's
 *    transform, grams that are not in the fitted vocabulary are ignored. For mining; when one
 *    sentence meets many others, compute its vector() once and compare vectors with dot().
 * charNgramCosine counts n-grams as numbers (pairgrams.ts, ~4× faster), falling back to string
 * n-grams (charngrams.ts) when numeric keys would not be exact; both give the same values.
 */
import {
  type CharNgramOptions,
  countGrams,
  prepare,
  type ResolvedCharNgramOptions,
  resolveCharNgramOptions,
} from './charngrams.js';
import { pairGramCosine } from './pairgrams.js';

/** Scales `v` in place to unit L2 norm (an all-zero vector stays as it is). */
function l2normalize(v: Map<string, number>): Map<string, number> {
  let ss = 0;
  for (const x of v.values()) ss += x * x;
  if (ss > 0) {
    const inv = 1 / Math.sqrt(ss);
    for (const [k, x] of v) v.set(k, x * inv);
  }
  return v;
}

/** Dot product of two sparse vectors (the cosine when both are L2-normalized). */
export function dot(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let sum = 0;
  for (const [k, x] of small) {
    const y = large.get(k);
    if (y !== undefined) sum += x * y;
  }
  return sum;
}

const tfOf = (count: number, sublinear: boolean): number => (sublinear ? 1 + Math.log(count) : count);

export interface PairCosineOptions extends CharNgramOptions {
  /** 'none' (default): uniform IDF; 'pair': IDF fitted on the two texts (sklearn fit_transform([a, b])). */
  idf?: 'none' | 'pair';
}

/** Char n-gram TF-IDF cosine of one pair, in [0, 1]; no corpus needed. See the file comment. */
export function charNgramCosine(a: string, b: string, options: PairCosineOptions = {}): number {
  const o = resolveCharNgramOptions(options);
  // With N = 2 and smooth idf: df 1 → ln(3/2) + 1, df 2 → ln(3/3) + 1 = 1.
  const idfOne = (options.idf ?? 'none') === 'pair' ? Math.log(1.5) + 1 : 1;
  const sa = prepare(a, o);
  const sb = prepare(b, o);
  const fast = pairGramCosine(sa, sb, o, idfOne);
  if (fast !== undefined) return Math.min(1, fast);
  const ca = countGrams(sa, o);
  const cb = countGrams(sb, o);
  const weigh = (own: Map<string, number>, other: Map<string, number>): Map<string, number> => {
    const v = new Map<string, number>();
    for (const [g, c] of own) v.set(g, tfOf(c, o.sublinearTf) * (other.has(g) ? 1 : idfOne));
    return l2normalize(v);
  };
  return Math.min(1, dot(weigh(ca, cb), weigh(cb, ca)));
}

export interface CharNgramTfidfJSON {
  options: ResolvedCharNgramOptions;
  documentCount: number;
  df: Array<[string, number]>;
}

/** Char n-gram TF-IDF fitted on a corpus (document frequencies), then used to score pairs. */
export class CharNgramTfidf {
  readonly options: Readonly<ResolvedCharNgramOptions>;
  private readonly df = new Map<string, number>();
  private docs = 0;

  constructor(options: CharNgramOptions = {}) {
    this.options = resolveCharNgramOptions(options);
  }

  /** Counts one document: every distinct n-gram of it once. */
  addDocument(text: string): void {
    for (const g of countGrams(prepare(text, this.options), this.options).keys())
      this.df.set(g, (this.df.get(g) ?? 0) + 1);
    this.docs++;
  }

  /** Adds every text of the corpus (may be called again to extend the fit). */
  fit(texts: Iterable<string>): this {
    for (const t of texts) this.addDocument(t);
    return this;
  }

  get documentCount(): number {
    return this.docs;
  }

  get vocabularySize(): number {
    return this.df.size;
  }

  /** ln((1 + N) / (1 + df)) + 1, or undefined for a gram not in the fitted vocabulary. */
  idf(gram: string): number | undefined {
    const df = this.df.get(gram);
    return df === undefined ? undefined : Math.log((1 + this.docs) / (1 + df)) + 1;
  }

  /** The L2-normalized TF-IDF vector of a text; n-grams outside the vocabulary are dropped. */
  vector(text: string): Map<string, number> {
    const v = new Map<string, number>();
    const lnN = Math.log(1 + this.docs);
    for (const [g, c] of countGrams(prepare(text, this.options), this.options)) {
      const df = this.df.get(g);
      if (df !== undefined) v.set(g, tfOf(c, this.options.sublinearTf) * (lnN - Math.log(1 + df) + 1));
    }
    return l2normalize(v);
  }

  /** Cosine of the two texts' vectors, in [0, 1]; 0 when either has no in-vocabulary n-gram. */
  similarity(a: string, b: string): number {
    return Math.min(1, dot(this.vector(a), this.vector(b)));
  }

  toJSON(): CharNgramTfidfJSON {
    return { options: { ...this.options }, documentCount: this.docs, df: [...this.df] };
  }

  static fromJSON(json: CharNgramTfidfJSON): CharNgramTfidf {
    const m = new CharNgramTfidf(json.options);
    for (const [g, n] of json.df) m.df.set(g, n);
    m.docs = json.documentCount;
    return m;
  }
}

/**
 * What the annotators' own labels say about the model: precision and recall of its label at every cut on
 * P(paraphrase) and of the bi-encoder cosine alone (both as stored with each annotation, as the pair looked
 * when judged), the cut with the best F1 of each, and how far annotators agree where several labeled one
 * pair (Cohen's kappa for each pair of annotators, Krippendorff's alpha over all; nominal, on paraphrase
 * or not, and on the labels themselves).
 */
import { parseTurku, positiveLabelsOf, positiveProbability } from '../text/labels.js';
import { SCHEME_INFO } from './schemes.js';
import type { Annotation } from './store.js';

export interface CutStats {
  threshold: number;
  precision: number;
  recall: number;
  f1: number;
  /** Pairs at or above the cut. */
  selected: number;
}

export interface AnnotationReport {
  /** Distinct pairs with a majority judgement (ties left out), and how many of them are paraphrases. */
  pairs: number;
  positives: number;
  ties: number;
  /** Pairs whose annotation carries the model's probabilities / the cosine (the rest are not scored). */
  withProbability: number;
  withCosine: number;
  model: CutStats[];
  cosine: CutStats[];
  best: { model?: CutStats | undefined; cosine?: CutStats | undefined };
  agreement: {
    /** Pairs labeled by two or more annotators. */
    shared: number;
    kappa: Array<{ a: string; b: string; pairs: number; binary: number; labels: number }>;
    alpha: { binary: number | null; labels: number | null };
  };
}

interface PairVotes {
  votes: Annotation[];
  gold?: boolean | undefined;
}

const round = (x: number) => Math.round(x * 10_000) / 10_000;
/** Paraphrase or not in the annotation's scheme (a Turku label by its base: 4>is counts as 4). */
const isPositive = (a: Annotation) =>
  SCHEME_INFO[a.scheme].positive.includes(
    a.scheme === 'turku' ? (parseTurku(a.label)?.base ?? a.label) : a.label,
  );
const pairKey = (a: Annotation) => `${a.s1}\u0000${a.s2}`;

/** P(paraphrase) the model gave the pair when it was judged (its positive labels summed), if stored. */
function modelProbability(a: Annotation): number | undefined {
  if (a.probabilities === undefined) return undefined;
  return positiveProbability(a.probabilities, positiveLabelsOf(Object.keys(a.probabilities)));
}

/** Precision / recall / F1 of "score >= t" against the gold, for each cut. */
function sweep(scored: Scored[], cuts: number[]): CutStats[] {
  const positives = scored.filter((s) => s.gold).length;
  return cuts.map((threshold) => {
    const sel = scored.filter((s) => s.score >= threshold);
    const tp = sel.filter((s) => s.gold).length;
    const precision = sel.length ? tp / sel.length : 0;
    const recall = positives ? tp / positives : 0;
    const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
    return {
      threshold,
      precision: round(precision),
      recall: round(recall),
      f1: round(f1),
      selected: sel.length,
    };
  });
}

const bestOf = (rows: CutStats[]) =>
  rows.reduce<CutStats | undefined>((b, r) => (r.selected > 0 && (!b || r.f1 > b.f1) ? r : b), undefined);

const grid = (from: number, to: number, step: number) =>
  Array.from({ length: Math.round((to - from) / step) + 1 }, (_, i) => round(from + i * step));

/** Cohen's kappa of two raters' labels on the same items. */
export function cohensKappa(a: readonly string[], b: readonly string[]): number {
  const n = a.length;
  if (n === 0) return Number.NaN;
  let agree = 0;
  const pa = new Map<string, number>();
  const pb = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    if (a[i] === b[i]) agree++;
    pa.set(a[i] as string, (pa.get(a[i] as string) ?? 0) + 1);
    pb.set(b[i] as string, (pb.get(b[i] as string) ?? 0) + 1);
  }
  const po = agree / n;
  let pe = 0;
  for (const [k, v] of pa) pe += (v / n) * ((pb.get(k) ?? 0) / n);
  return pe === 1 ? (po === 1 ? 1 : 0) : (po - pe) / (1 - pe);
}

/** Krippendorff's alpha, nominal, over units with any number (>= 2 counted) of values each. */
export function krippendorffAlpha(units: ReadonlyArray<readonly string[]>): number | null {
  const coincidence = new Map<string, Map<string, number>>();
  const add = (c: string, k: string, w: number) => {
    const row = coincidence.get(c) ?? new Map<string, number>();
    row.set(k, (row.get(k) ?? 0) + w);
    coincidence.set(c, row);
  };
  for (const u of units) {
    if (u.length < 2) continue;
    for (let i = 0; i < u.length; i++)
      for (let j = 0; j < u.length; j++) if (i !== j) add(u[i] as string, u[j] as string, 1 / (u.length - 1));
  }
  const nc = new Map<string, number>();
  let n = 0;
  let observed = 0;
  for (const [c, row] of coincidence) {
    for (const [k, w] of row) {
      nc.set(c, (nc.get(c) ?? 0) + w);
      n += w;
      if (c !== k) observed += w;
    }
  }
  if (n <= 1) return null;
  let expected = 0;
  for (const [c, a] of nc) for (const [k, b] of nc) if (c !== k) expected += a * b;
  expected /= n - 1;
  return expected === 0 ? null : round(1 - observed / expected);
}

function agreement(groups: PairVotes[]): AnnotationReport['agreement'] {
  const shared = groups.filter((g) => new Set(g.votes.map((v) => v.annotator ?? '')).size >= 2);
  const byRater = new Map<string, Map<string, Annotation>>();
  for (const g of shared) {
    for (const v of g.votes) {
      const r = v.annotator ?? '';
      const m = byRater.get(r) ?? new Map<string, Annotation>();
      m.set(pairKey(v), v);
      byRater.set(r, m);
    }
  }
  const raters = [...byRater.keys()].sort();
  const kappa: AnnotationReport['agreement']['kappa'] = [];
  for (let i = 0; i < raters.length; i++) {
    for (let j = i + 1; j < raters.length; j++) {
      const [ra, rb] = [byRater.get(raters[i] as string)!, byRater.get(raters[j] as string)!];
      const both = [...ra.keys()].filter((k) => rb.has(k));
      if (both.length < 2) continue;
      const pick = (m: Map<string, Annotation>, f: (a: Annotation) => string) =>
        both.map((k) => f(m.get(k)!));
      const bin = (a: Annotation) => String(isPositive(a));
      const lab = (a: Annotation) => a.label;
      kappa.push({
        a: raters[i] as string,
        b: raters[j] as string,
        pairs: both.length,
        binary: round(cohensKappa(pick(ra, bin), pick(rb, bin))),
        labels: round(cohensKappa(pick(ra, lab), pick(rb, lab))),
      });
    }
  }
  return {
    shared: shared.length,
    kappa,
    alpha: {
      binary: krippendorffAlpha(shared.map((g) => g.votes.map((v) => String(isPositive(v))))),
      labels: krippendorffAlpha(shared.map((g) => g.votes.map((v) => v.label))),
    },
  };
}

interface Judged {
  groups: PairVotes[];
  /** Pairs with a majority judgement. */
  judged: PairVotes[];
  ties: number;
}

/** The annotations by pair, each pair's gold the annotators' majority (ties have none). */
function judge(annotations: Iterable<Annotation>): Judged {
  const groups = new Map<string, PairVotes>();
  for (const a of annotations) {
    const g = groups.get(pairKey(a)) ?? { votes: [] };
    g.votes.push(a);
    groups.set(pairKey(a), g);
  }
  let ties = 0;
  for (const g of groups.values()) {
    const yes = g.votes.filter(isPositive).length;
    const no = g.votes.length - yes;
    if (yes === no) ties++;
    else g.gold = yes > no;
  }
  const all = [...groups.values()];
  return { groups: all, judged: all.filter((g) => g.gold !== undefined), ties };
}

/** The first stored score of each judged pair (every annotator saw the same model and index), with its gold. */
const scoredBy = (judged: PairVotes[], f: (a: Annotation) => number | undefined): Scored[] =>
  judged.flatMap((g) => {
    const score = g.votes.map(f).find((x) => x !== undefined);
    return score === undefined ? [] : [{ score, gold: g.gold as boolean }];
  });

export interface Scored {
  score: number;
  gold: boolean;
}

/** The report's table of cuts. */
const MODEL_CUTS = grid(0.05, 0.95, 0.05);
/**
 * The cuts a best cut is chosen from: the training kit's grid and rule (choose_threshold in
 * training/paramine_train/reranker_export.py; test/fixtures/calibration-golden.json holds both to it).
 */
const CHOICE_CUTS = grid(0.05, 0.95, 0.01);

/** The judged pairs that carry the model's P(paraphrase) as the page showed it, with the majority's verdict. */
export function modelScores(annotations: Iterable<Annotation>): Scored[] {
  return scoredBy(judge(annotations).judged, modelProbability);
}

/**
 * The cut on P(paraphrase) with the best F1 on these pairs (F1 rounded to 4 places; ties go to the higher cut,
 * fewer false positives), if any pair is selected.
 */
export function bestModelCut(scored: Scored[]): CutStats | undefined {
  return sweep(scored, CHOICE_CUTS).reduce<CutStats | undefined>(
    (b, r) => (r.selected > 0 && (!b || r.f1 >= b.f1) ? r : b),
    undefined,
  );
}

/** The report over every annotation given (one record per annotator and pair, as the store keeps them). */
export function annotationReport(annotations: Iterable<Annotation>): AnnotationReport {
  const { groups, judged, ties } = judge(annotations);
  const byModel = scoredBy(judged, modelProbability);
  const byCosine = scoredBy(judged, (a) => a.cosine);
  const model = sweep(byModel, MODEL_CUTS);
  const cosine = sweep(byCosine, grid(0.3, 0.98, 0.02));
  return {
    pairs: judged.length,
    positives: judged.filter((g) => g.gold).length,
    ties,
    withProbability: byModel.length,
    withCosine: byCosine.length,
    model,
    cosine,
    best: { model: bestModelCut(byModel), cosine: bestOf(cosine) },
    agreement: agreement(groups),
  };
}

/**
 * Lexical measures and the papers' pair filters, shared by the search route, mining jobs and the
 * benchmark: MultiPIT (min 5 tokens, BLEU <= 14), ParaTag (5 < BLEU < 20, each side >= 10 characters,
 * length ratio < 2.5), ParaSCI (PLR < 1.0).
 */
import { z } from 'zod';
import {
  charLength,
  charNgramCosine,
  lengthRatioOfLengths,
  plrOfLengths,
  symmetricBleu,
  tokenCount,
} from '../text/index.js';

export interface LexicalMeasures {
  /** Character 2-4-gram cosine (Kanerva et al.). */
  charNgramCosine: number;
  /** Mean of sentence BLEU both ways, 0-100 (sacrebleu defaults). */
  bleu: number;
  /** |len(a) - len(b)| / min(len(a), len(b)) in tokens; null when one side is empty. */
  plr: number | null;
  /** max / min length in tokens; null when one side is empty. */
  lengthRatio: number | null;
}

/** One filter: all its fields must hold (AND); `anyOf` adds "at least one of these filters holds" (OR). */
export interface LexicalFilter {
  minTokens?: number | undefined;
  minChars?: number | undefined;
  bleuMin?: number | undefined;
  bleuMax?: number | undefined;
  plrMax?: number | undefined;
  lengthRatioMax?: number | undefined;
  /** Character n-gram cosine (Kanerva et al.): at least min, below max. */
  charNgramMin?: number | undefined;
  charNgramMax?: number | undefined;
  /** The cross-encoder's probability of any label (not only the predicted one): at least min, below max. */
  probabilityMin?: Record<string, number> | undefined;
  probabilityMax?: Record<string, number> | undefined;
  /** BERTScore F1 above this (top-level filter only: computed last, see search/bertscore.ts). */
  bertScoreMin?: number | undefined;
  bertScoreIdf?: boolean | undefined;
  anyOf?: LexicalFilter[] | undefined;
}

const probabilityBounds = z.record(z.string().min(1), z.number().min(0).max(1));

const filterObject = z
  .object({
    minTokens: z.number().int().min(0).optional(),
    minChars: z.number().int().min(0).optional(),
    bleuMin: z.number().min(0).max(100).optional(),
    bleuMax: z.number().min(0).max(100).optional(),
    plrMax: z.number().min(0).optional(),
    lengthRatioMax: z.number().min(1).optional(),
    charNgramMin: z.number().min(0).max(1).optional(),
    charNgramMax: z.number().min(0).max(1).optional(),
    probabilityMin: probabilityBounds.optional(),
    probabilityMax: probabilityBounds.optional(),
    get anyOf() {
      return z.array(lexicalFilterSchema).min(1).max(16).optional();
    },
    // search/bertscore.ts; ParaSCI: > 0.7 with SciBERT.
    bertScoreMin: z
      .number()
      .min(-1)
      .max(1)
      .optional()
      .describe(
        'BERTScore F1 (greedy matching of the encoder’s contextual token vectors) must exceed this; computed ' +
          'last, only for candidates every other filter kept. The `parasci` preset uses 0.7 recalibrated for ' +
          'the encoder (docs/bertscore.md).',
      ),
    bertScoreIdf: z
      .boolean()
      .optional()
      .describe('Weight BERTScore’s tokens by idf over a sample of the index’s own sentences.'),
  })
  .strict();

export const lexicalFilterSchema: z.ZodType<LexicalFilter> = filterObject
  .refine((f) => f.bleuMin === undefined || f.bleuMax === undefined || f.bleuMin <= f.bleuMax, {
    message: 'bleuMin must not exceed bleuMax',
    path: ['bleuMin'],
  })
  .refine(
    (f) => f.charNgramMin === undefined || f.charNgramMax === undefined || f.charNgramMin < f.charNgramMax,
    {
      message: 'charNgramMin must be below charNgramMax',
      path: ['charNgramMin'],
    },
  )
  .meta({
    id: 'LexicalFilter',
    description: [
      'The papers’ pair filters: MultiPIT (`minTokens: 5, bleuMax: 14`), ParaTag (`bleuMin: 5, bleuMax: 20,',
      'minChars: 10, lengthRatioMax: 2.5`), ParaSCI (`plrMax: 1`; its BERTScore > 0.7 is `bertScoreMin`).',
      '`minTokens` and `minChars` are inclusive and apply to both sides; `bleuMin` is exclusive, `bleuMax`',
      'inclusive, `plrMax` and `lengthRatioMax` exclusive. `bleuMin` must not exceed `bleuMax`. `charNgramMin`',
      '(inclusive) and `charNgramMax` (exclusive) bound the character n-gram cosine; `probabilityMin`',
      '(inclusive) and `probabilityMax` (exclusive) bound any label’s probability from the cross-encoder',
      '(they need rerank; unknown labels are a 400). All fields must hold; `anyOf` adds "at least one of',
      'these filters holds", so Turku’s confident negatives are one filter - `{"anyOf":',
      '[{"charNgramMax": 0.1}, {"probabilityMin": {"not_paraphrase": 0.4}}]}`.',
    ].join('\n'),
  });

/** Labels a filter's probability bounds name, anywhere in it (the job checks them against the model). */
export function filterLabels(f: LexicalFilter): string[] {
  const own = [...Object.keys(f.probabilityMin ?? {}), ...Object.keys(f.probabilityMax ?? {})];
  return [...new Set([...own, ...(f.anyOf ?? []).flatMap(filterLabels)])];
}

/** Whether the filter needs the cross-encoder's probabilities to decide. */
export function filterNeedsProbabilities(f: LexicalFilter): boolean {
  return filterLabels(f).length > 0;
}

const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);

export function lexicalMeasures(a: string, b: string): LexicalMeasures {
  const la = tokenCount(a);
  const lb = tokenCount(b);
  return {
    charNgramCosine: charNgramCosine(a, b),
    bleu: symmetricBleu(a, b),
    plr: finiteOrNull(plrOfLengths(la, lb)),
    lengthRatio: finiteOrNull(lengthRatioOfLengths(la, lb)),
  };
}

/**
 * Bounds as the papers state them: minTokens and minChars inclusive (>=), bleuMin exclusive (ParaTag
 * 5 < BLEU), bleuMax inclusive (MultiPIT BLEU <= 14), plrMax and lengthRatioMax exclusive (< 1.0, < 2.5);
 * charNgramMin and probabilityMin inclusive, charNgramMax and probabilityMax exclusive (Turku: n-gram
 * similarity < 0.1).
 *
 * Three-valued: undefined when the answer depends on label probabilities that are not known yet, so the
 * search core can drop what fails on the cheap measures before the cross-encoder runs, and decide the
 * rest after it.
 */
export function evaluateFilter(
  a: string,
  b: string,
  f: LexicalFilter,
  m?: LexicalMeasures,
  probabilities?: Readonly<Record<string, number>>,
): boolean | undefined {
  if (f.minTokens !== undefined && (tokenCount(a) < f.minTokens || tokenCount(b) < f.minTokens)) return false;
  if (f.minChars !== undefined && (charLength(a) < f.minChars || charLength(b) < f.minChars)) return false;
  const needsMeasures =
    f.bleuMin !== undefined ||
    f.bleuMax !== undefined ||
    f.plrMax !== undefined ||
    f.lengthRatioMax !== undefined ||
    f.charNgramMin !== undefined ||
    f.charNgramMax !== undefined ||
    f.anyOf !== undefined;
  const x = needsMeasures ? (m ?? lexicalMeasures(a, b)) : undefined;
  if (x !== undefined) {
    if (f.bleuMin !== undefined && !(x.bleu > f.bleuMin)) return false;
    if (f.bleuMax !== undefined && !(x.bleu <= f.bleuMax)) return false;
    if (f.plrMax !== undefined && (x.plr === null || !(x.plr < f.plrMax))) return false;
    if (f.lengthRatioMax !== undefined && (x.lengthRatio === null || !(x.lengthRatio < f.lengthRatioMax)))
      return false;
    if (f.charNgramMin !== undefined && !(x.charNgramCosine >= f.charNgramMin)) return false;
    if (f.charNgramMax !== undefined && !(x.charNgramCosine < f.charNgramMax)) return false;
  }
  let unknown = false;
  if (f.probabilityMin !== undefined || f.probabilityMax !== undefined) {
    if (probabilities === undefined) unknown = true;
    else {
      for (const [label, min] of Object.entries(f.probabilityMin ?? {}))
        if (!((probabilities[label] ?? 0) >= min)) return false;
      for (const [label, max] of Object.entries(f.probabilityMax ?? {}))
        if (!((probabilities[label] ?? 0) < max)) return false;
    }
  }
  if (f.anyOf !== undefined) {
    const branches = f.anyOf.map((g) => evaluateFilter(a, b, g, x, probabilities));
    if (!branches.includes(true)) {
      if (!branches.includes(undefined)) return false;
      unknown = true;
    }
  }
  return unknown ? undefined : true;
}

/** evaluateFilter without label probabilities: false only when the cheap measures already fail. */
export function passesLexical(a: string, b: string, f: LexicalFilter, m?: LexicalMeasures): boolean {
  return evaluateFilter(a, b, f, m) !== false;
}

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

export const lexicalFilterSchema = z
  .object({
    minTokens: z.number().int().min(0).optional(),
    minChars: z.number().int().min(0).optional(),
    bleuMin: z.number().min(0).max(100).optional(),
    bleuMax: z.number().min(0).max(100).optional(),
    plrMax: z.number().min(0).optional(),
    lengthRatioMax: z.number().min(1).optional(),
    /**
     * BERTScore F1 (encoder token vectors, greedy matching) must exceed this; computed last, only for
     * candidates every other filter kept (search/bertscore.ts). ParaSCI: > 0.7 with SciBERT.
     */
    bertScoreMin: z.number().min(-1).max(1).optional(),
    /** Weight BERTScore's tokens by idf over the index's own sentences. */
    bertScoreIdf: z.boolean().optional(),
  })
  .strict()
  .refine((f) => f.bleuMin === undefined || f.bleuMax === undefined || f.bleuMin <= f.bleuMax, {
    message: 'bleuMin must not exceed bleuMax',
    path: ['bleuMin'],
  });
export type LexicalFilter = z.infer<typeof lexicalFilterSchema>;

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
 * 5 < BLEU), bleuMax inclusive (MultiPIT BLEU <= 14), plrMax and lengthRatioMax exclusive (< 1.0, < 2.5).
 */
export function passesLexical(a: string, b: string, f: LexicalFilter, m?: LexicalMeasures): boolean {
  if (f.minTokens !== undefined && (tokenCount(a) < f.minTokens || tokenCount(b) < f.minTokens)) return false;
  if (f.minChars !== undefined && (charLength(a) < f.minChars || charLength(b) < f.minChars)) return false;
  const needsMeasures =
    f.bleuMin !== undefined ||
    f.bleuMax !== undefined ||
    f.plrMax !== undefined ||
    f.lengthRatioMax !== undefined;
  if (!needsMeasures) return true;
  const x = m ?? lexicalMeasures(a, b);
  if (f.bleuMin !== undefined && !(x.bleu > f.bleuMin)) return false;
  if (f.bleuMax !== undefined && !(x.bleu <= f.bleuMax)) return false;
  if (f.plrMax !== undefined && (x.plr === null || !(x.plr < f.plrMax))) return false;
  if (f.lengthRatioMax !== undefined && (x.lengthRatio === null || !(x.lengthRatio < f.lengthRatioMax)))
    return false;
  return true;
}

/**
 * `paramine domain fit`: the combined mode's logistic regression over (cosine, the reranker's paraphrase
 * probability when one is given, the lower and the higher σ of the two sides), fit on labeled in-domain
 * pairs: positives are paraphrases that belong to the domain, negatives everything else the annotator
 * rejected. The pair's two σ enter sorted, so the score does not depend on which side is which.
 */
import { ParamineError } from '../errors.js';
import { combinedFeatures, type SideScore } from './apply.js';
import { evaluateLogistic, fitLogistic } from './logistic.js';
import { COMBINED_FEATURES, type CombinedFeature, type CombinedModel } from './manifest.js';

export interface FitExample {
  cosine: number;
  rerankProbability?: number | undefined;
  a: SideScore;
  b: SideScore;
  positive: boolean;
}

export interface FitOptions {
  file: string;
  reranker?: { id: string; sha256: string } | undefined;
}

export function fitCombined(examples: readonly FitExample[], o: FitOptions): CombinedModel {
  const positives = examples.filter((e) => e.positive).length;
  const negatives = examples.length - positives;
  if (positives === 0 || negatives === 0) {
    throw new ParamineError(
      'BAD_INPUT',
      `${o.file}: the combined model needs paraphrase and non-paraphrase pairs; it has ${positives} and ${negatives}`,
      { field: 'pairs' },
    );
  }
  const features: CombinedFeature[] = COMBINED_FEATURES.filter(
    (f) => f !== 'rerankProbability' || o.reranker !== undefined,
  );
  const d = features.length;
  const x = new Float64Array(examples.length * d);
  const y = new Uint8Array(examples.length);
  examples.forEach((e, i) => {
    x.set(combinedFeatures(features, e, e.a, e.b), i * d);
    y[i] = e.positive ? 1 : 0;
  });
  const model = fitLogistic(x, y, d, { l2: 1e-3, iterations: 2000, learningRate: 0.05 });
  return {
    features,
    ...model,
    ...(o.reranker ? { reranker: o.reranker } : {}),
    pairs: { file: o.file, positives, negatives },
    training: evaluateLogistic(model, x, y),
    fittedAt: new Date().toISOString(),
  };
}

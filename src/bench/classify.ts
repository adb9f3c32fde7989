/** Classification benchmark (Kanerva et al., Tables 4/5; Dou et al., Table 2): the cross-encoder on labeled pairs. */
import { readPairs } from '../corpus/index.js';
import { ParamineError } from '../errors.js';
import { resolveModelDir } from '../models/resolve.js';
import { CrossEncoder } from '../rerank/index.js';
import { detectScheme } from './labels.js';
import { classificationMetrics } from './metrics.js';

export interface ClassifyOptions {
  pairs: string;
  reranker: string;
  positive?: string[] | undefined;
  /** Only the pairs at these 1-based file lines (a held-out split); all when undefined. */
  lines?: ReadonlySet<number> | undefined;
}

export async function classifyBenchmark(o: ClassifyOptions) {
  const all = await readPairs(o.pairs);
  const lineOf = (where: string) => Number(where.slice(where.lastIndexOf(':') + 1));
  const pairs = o.lines ? all.filter((p) => o.lines?.has(lineOf(p.where))) : all;
  if (pairs.length === 0)
    throw new ParamineError('BAD_INPUT', `${o.pairs}: no pairs selected`, { field: 'heldout' });
  const gold = pairs.map((p) => p.label);
  if (gold.some((g) => g === undefined)) {
    throw new ParamineError('BAD_FILE', `${o.pairs}: classification needs a label on every pair`, {
      field: 'pairs',
    });
  }
  const cross = await CrossEncoder.open(resolveModelDir(o.reranker, 'reranker'));
  try {
    const t0 = performance.now();
    const scores = await cross.score(pairs.map((p) => [p.s1, p.s2] as const));
    const seconds = (performance.now() - t0) / 1000;
    const scheme = detectScheme(
      [...(gold as string[]), ...scores.map((s) => s.label)],
      o.positive ? { positive: o.positive } : {},
    );
    // A binary model may name its labels paraphrase / not_paraphrase where the data says 1 / 0: report
    // predictions in the data's own label names.
    const goldLabels = new Set(gold as string[]);
    const goldPos = [...goldLabels].find((l) => scheme.isPositive(l) === true);
    const goldNeg = [...goldLabels].find((l) => scheme.isPositive(l) === false);
    const predicted = scores.map((s) => {
      if (goldLabels.has(s.label) || scheme.name !== 'binary') return s.label;
      const pos = scheme.isPositive(s.label);
      return (pos === true ? goldPos : pos === false ? goldNeg : undefined) ?? s.label;
    });
    const result = classificationMetrics(gold as string[], predicted, scheme);
    return {
      result: { ...result, model: cross.modelId, pairs_per_s: pairs.length / seconds },
      scheme: scheme.name,
    };
  } finally {
    await cross.close();
  }
}

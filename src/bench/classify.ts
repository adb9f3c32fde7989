/** Classification benchmark (Kanerva et al., Tables 4/5; Dou et al., Table 2): the cross-encoder on labeled pairs. */
import { Option } from 'commander';
import { z } from 'zod';
import { reliability } from '../annotations/index.js';
import { heldoutLines, type LabeledPair, pairsAtLines, readPairs } from '../corpus/index.js';
import { writeFileAtomic } from '../durable.js';
import { ParamineError } from '../errors.js';
import { LABEL_MODES, type LabelMode } from '../models/ports.js';
import { resolveModelDir } from '../models/resolve.js';
import { openLabeler } from '../rerank/index.js';
import { DEFAULT_RERANKER } from '../service/index.js';
import { detectScheme, positiveProbability } from '../text/labels.js';
import { defineBenchmark, list } from './harness.js';
import { classificationMetrics } from './metrics.js';
import { classificationMarkdown } from './report.js';

export interface ClassifyOptions {
  pairs: string;
  reranker: string;
  positive?: string[] | undefined;
  /** Only the pairs at these 1-based file lines (a held-out split); all when undefined. */
  lines?: ReadonlySet<number> | undefined;
  /** Who labels (default `fast`: the model alone, as before the cascade). */
  mode?: LabelMode | undefined;
  /** Write every pair's scores here (JSON lines), for error analysis and parity checks. */
  scores?: string | undefined;
}

export async function classifyBenchmark(o: ClassifyOptions) {
  const all = await readPairs(o.pairs);
  const pairs = o.lines ? pairsAtLines(all, o.lines) : all;
  if (pairs.length === 0)
    throw new ParamineError('BAD_INPUT', `${o.pairs}: no pairs selected`, { field: 'heldout' });
  const labels = pairs.map((p) => p.label);
  if (labels.some((g) => g === undefined)) {
    throw new ParamineError('BAD_FILE', `${o.pairs}: classification needs a label on every pair`, {
      field: 'pairs',
    });
  }
  const mode = o.mode ?? 'fast';
  const {
    labeler,
    student: cross,
    close,
  } = await openLabeler(resolveModelDir(o.reranker, 'reranker'), {
    mode,
  });
  try {
    // The teacher opens outside the timing (the service keeps it open once a pair needed it).
    if (mode !== 'fast' && labeler.teacher)
      await labeler.score([['warm up', 'warm up']], undefined, { mode: 'best' });
    const t0 = performance.now();
    const scores = await labeler.score(pairs.map((p) => [p.s1, p.s2] as const));
    const seconds = (performance.now() - t0) / 1000;
    const byModel: Record<string, number> = {};
    for (const s of scores) if (s.model) byModel[s.model] = (byModel[s.model] ?? 0) + 1;
    if (o.scores) await writeScores(o.scores, pairs, scores);
    const collapsed = collapseToBinary(labels as string[], cross.labels, o.positive);
    const gold = collapsed?.gold ?? (labels as string[]);
    const scheme = detectScheme(
      [...gold, ...scores.map((s) => s.label)],
      o.positive && !collapsed ? { positive: o.positive } : {},
    );
    // A binary model may name its labels paraphrase / not_paraphrase where the data says 1 / 0: report
    // predictions in the data's own label names.
    const goldLabels = new Set(gold);
    const goldPos = [...goldLabels].find((l) => scheme.isPositive(l) === true);
    const goldNeg = [...goldLabels].find((l) => scheme.isPositive(l) === false);
    const predicted = scores.map((s) => {
      if (goldLabels.has(s.label) || scheme.name !== 'binary') return s.label;
      const pos = scheme.isPositive(s.label);
      return (pos === true ? goldPos : pos === false ? goldNeg : undefined) ?? s.label;
    });
    const result = classificationMetrics(gold, predicted, scheme);
    if (result.binary && scheme.name === 'binary') {
      const pos = scores.map((s) => positiveProbability(s.probabilities, cross.positiveLabels));
      result.calibration = reliability(
        pos,
        gold.map((g) => scheme.isPositive(g) === true),
      );
    }
    return {
      result: {
        ...result,
        model: cross.modelId,
        mode,
        labeled_by: byModel,
        label_cut: cross.threshold ?? null,
        label_calibration: cross.labelCalibration ?? null,
        pairs_per_s: pairs.length / seconds,
        ...(collapsed ? { gold_collapsed: collapsed.rule } : {}),
      },
      scheme: scheme.name,
    };
  } finally {
    await close();
  }
}

/** One JSON line a pair, in the file's order: the texts, the gold label and what the labeler answered. */
async function writeScores(
  file: string,
  pairs: readonly LabeledPair[],
  scores: ReadonlyArray<{ label: string; probabilities: Record<string, number>; model?: string | undefined }>,
) {
  const lines = pairs.map((p, i) => {
    const s = scores[i] as (typeof scores)[number];
    return JSON.stringify({
      s1: p.s1,
      s2: p.s2,
      gold: p.label,
      label: s.label,
      probabilities: s.probabilities,
      model: s.model,
    });
  });
  await writeFileAtomic(file, lines.length ? `${lines.join('\n')}\n` : '');
}

/**
 * A binary model (paraphrase / not) on a richer gold scheme (Turku's 1–4 with flags): score it as the papers'
 * binary task, gold mapped through the gold scheme's own positive rule. Undefined when no mapping is needed.
 */
export function collapseToBinary(
  gold: readonly string[],
  modelLabels: readonly string[],
  positive?: readonly string[],
): { gold: string[]; rule: string } | undefined {
  const goldScheme = detectScheme(gold, positive ? { positive } : {});
  if (goldScheme.name === 'binary' || detectScheme(modelLabels).name !== 'binary') return undefined;
  const rule = positive
    ? `positive: ${positive.join(',')}`
    : goldScheme.name === 'turku'
      ? 'turku base >= 3'
      : '';
  if (rule === '') return undefined;
  return {
    gold: gold.map((g) => {
      const pos = goldScheme.isPositive(g);
      if (pos === undefined) {
        throw new ParamineError(
          'BAD_INPUT',
          `gold label "${g}" is neither positive nor negative; set --positive`,
          {
            field: 'positive',
          },
        );
      }
      return pos ? 'paraphrase' : 'not_paraphrase';
    }),
    rule: `${goldScheme.name} gold as binary (${rule})`,
  };
}

/** The 1-based file lines a held-out split lists (`{"lines": [...]}`). */
export const classify = defineBenchmark({
  name: 'classify',
  description: 'per-label precision / recall / F1 of the cross-encoder on labeled pairs',
  options: (cmd) =>
    cmd
      .requiredOption('--pairs <file>', 'labeled pairs')
      .option('--reranker <name|dir>', 'cross-encoder', DEFAULT_RERANKER)
      .option('--positive <labels>', 'labels counted as positive', list)
      .option(
        '--heldout <json>',
        'only the pairs at the 1-based file lines this JSON file lists ({"lines": [...]})',
      )
      .addOption(
        new Option('--labels-mode <mode>', 'who labels: fast (the model alone), balanced, best').choices(
          LABEL_MODES,
        ),
      )
      .option('--scores <file>', "every pair's label and probabilities, one JSON line a pair"),
  schema: z.object({
    pairs: z.string(),
    scores: z.string().min(1).optional(),
    reranker: z.string(),
    labelsMode: z.enum(LABEL_MODES).optional(),
    positive: z.array(z.string()).optional(),
    heldout: z.string().optional(),
  }),
  async run(o) {
    const lines = o.heldout ? heldoutLines(o.heldout) : undefined;
    const { result } = await classifyBenchmark({ ...o, lines, mode: o.labelsMode });
    const markdown = classificationMarkdown(result, {
      title: `Classification: ${o.pairs} (${result.model}, ${result.mode})`,
    });
    return { result, markdown };
  },
});

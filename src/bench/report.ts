/**
 * The benchmarks' Markdown tables (docs/architecture.md "Benchmarks"), columns padded so they also read
 * well in a terminal; the retrieval figure is in figure.ts.
 *
 * - retrievalMarkdown: one row per retrieval group (`all` first) and search variant (ANN, exact, reranked …):
 *   n, top-N for every depth of any variant (– where a variant has no such depth), not found, MRR.
 * - classificationMarkdown: sklearn-style per-label table with the weighted average, then accuracy and binary
 *   paraphrase P/R/F1; for the Turku scheme also the base-label table and subsumption / flag detection.
 */
import {
  type ClassificationResult,
  groupOrder,
  type LabelStats,
  type MultiClassStats,
  type RetrievalResult,
  type RetrievalStats,
} from './metrics.js';

export interface RetrievalRun {
  /** Search variant shown in the table: 'ANN', 'exact', 'ANN + rerank' … */
  name: string;
  result: RetrievalResult;
}

export const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
const pct1 = (v: number) => (v * 100).toFixed(1);

/** A Markdown table with padded columns; `align` per column: 'l' or 'r'. */
export function markdownTable(header: readonly string[], rows: readonly string[][], align: string): string {
  const widths = header.map((h, c) => Math.max(3, h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const pad = (s: string, c: number) =>
    align[c] === 'r' ? s.padStart(widths[c] ?? 0) : s.padEnd(widths[c] ?? 0);
  const line = (cells: readonly string[]) =>
    `| ${header.map((_, c) => pad(cells[c] ?? '', c)).join(' | ')} |`;
  const rule = `|${widths.map((w, c) => (align[c] === 'r' ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

function runsOf(runs: RetrievalResult | readonly RetrievalRun[]): readonly RetrievalRun[] {
  return 'kind' in runs ? [{ name: 'ANN', result: runs }] : runs;
}

/** Group names: `all`, then each run's groups in its order (when there is more than one group). */
export function groupsOf(runs: readonly RetrievalRun[]): string[] {
  const groups: string[] = [];
  for (const { result } of runs)
    for (const g of Object.keys(result.labels)) if (!groups.includes(g)) groups.push(g);
  // JSON objects list integer-like keys ("3") first whatever the insertion order: re-sort for people.
  groups.sort(groupOrder);
  return groups.length > 1 ? ['all', ...groups] : groups.length === 1 ? groups : ['all'];
}

export const statsOf = (r: RetrievalResult, group: string): RetrievalStats | undefined =>
  group === 'all' ? r : r.labels[group];

export function retrievalMarkdown(
  runs: RetrievalResult | readonly RetrievalRun[],
  opts: { title?: string } = {},
): string {
  const list = runsOf(runs);
  const depths = [...new Set(list.flatMap(({ result }) => Object.keys(result.top).map(Number)))].sort(
    (a, b) => a - b,
  );
  const variant = list.length > 1;
  const header = [
    'label',
    'n',
    ...(variant ? ['search'] : []),
    ...depths.map((d) => `top-${d}`),
    'not found',
    'MRR',
  ];
  const rows: string[][] = [];
  for (const g of groupsOf(list)) {
    for (const { name, result } of list) {
      const s = statsOf(result, g);
      if (!s) continue;
      rows.push([
        g,
        String(s.n),
        ...(variant ? [name] : []),
        ...depths.map((d) => {
          const v = s.top[String(d)];
          return v === undefined ? '–' : pct(v);
        }),
        pct(s.not_found),
        s.mrr.toFixed(3),
      ]);
    }
  }
  const align = `lr${variant ? 'l' : ''}${'r'.repeat(depths.length + 2)}`;
  const table = markdownTable(header, rows, align);
  return opts.title ? `### ${opts.title}\n\n${table}\n` : `${table}\n`;
}

const prfRow = (name: string, s: LabelStats) => [
  name,
  pct1(s.precision),
  pct1(s.recall),
  pct1(s.f1),
  String(s.support),
];

function labelRows(m: MultiClassStats): string[][] {
  return [
    ...Object.entries(m.labels).map(([name, s]) => prfRow(name, s)),
    prfRow('weighted avg', { ...m.weighted, support: m.n }),
  ];
}

const PRF_HEADER = ['label', 'precision %', 'recall %', 'F1 %', 'support'];

export function classificationMarkdown(result: ClassificationResult, opts: { title?: string } = {}): string {
  const parts: string[] = [];
  if (opts.title) parts.push(`### ${opts.title}`);
  parts.push(markdownTable(PRF_HEADER, labelRows(result), 'lrrrr'));
  let summary = `accuracy ${pct(result.accuracy)} (n = ${result.n})`;
  if (result.binary) {
    const b = result.binary;
    summary += ` · paraphrase (binary) precision ${pct(b.precision)}, recall ${pct(b.recall)}, F1 ${pct(b.f1)}`;
  }
  parts.push(summary);
  if (result.calibration) {
    const c = result.calibration;
    parts.push(
      `reported P(paraphrase) against the share of paraphrases: ECE ${c.ece.toFixed(3)}, Brier ${c.brier.toFixed(3)}`,
    );
    parts.push(
      markdownTable(
        ['P(paraphrase)', 'pairs', 'mean P', 'share paraphrases'],
        c.bins.map((b) => [
          `${b.lo.toFixed(1)}-${b.hi.toFixed(1)}`,
          String(b.n),
          b.meanP.toFixed(3),
          b.observed.toFixed(3),
        ]),
        'lrrr',
      ),
    );
  }
  if (result.turku) {
    const t = result.turku;
    parts.push('Base labels (subsumption and flags merged into the base label):');
    parts.push(markdownTable(PRF_HEADER, labelRows(t.base), 'lrrrr'));
    parts.push(`base-label accuracy ${pct(t.base.accuracy)}`);
    parts.push('Subsumption and flags, each scored as a detection task:');
    parts.push(
      markdownTable(
        ['marker', 'precision %', 'recall %', 'F1 %', 'support'],
        [
          prfRow('< (subsumption)', t.subsumption['<']),
          prfRow('> (subsumption)', t.subsumption['>']),
          prfRow('i (minor deviation)', t.flags.i),
          prfRow('s (style/register)', t.flags.s),
        ],
        'lrrrr',
      ),
    );
  }
  return `${parts.join('\n\n')}\n`;
}

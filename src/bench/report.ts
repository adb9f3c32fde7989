/**
 * Human-facing output of the benchmarks (DESIGN.md "Benchmarks"): compact Markdown tables (columns padded so
 * they also read well in a terminal) and an SVG figure of retrieval accuracy.
 *
 * - retrievalMarkdown: one row per retrieval group (`all` first) and search variant (ANN, exact, reranked …):
 *   n, top-N for every depth of any variant (– where a variant has no such depth), not found, MRR.
 * - classificationMarkdown: sklearn-style per-label table with the weighted average, then accuracy and binary
 *   paraphrase P/R/F1; for the Turku scheme also the base-label table and subsumption / flag detection.
 * - retrievalSvg: grouped bars of top-N accuracy per label group as Kanerva et al. 2023, Fig. 11 (x = label
 *   group, one bar per depth, percentage on each bar); with an exact-search result too, each bar is the ANN
 *   value with a dashed outline at the exact value, so the ANN loss is the gap between them.
 */
import { scaleBand, scaleLinear } from 'd3-scale';
import {
  type ClassificationResult,
  groupOrder,
  type LabelStats,
  type MultiClassStats,
  type RetrievalResult,
  type RetrievalStats,
} from './metrics.js';
import { el, esc, svgDocument, text } from './svg.js';

export interface RetrievalRun {
  /** Search variant shown in the table: 'ANN', 'exact', 'ANN + rerank' … */
  name: string;
  result: RetrievalResult;
}

const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
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
function groupsOf(runs: readonly RetrievalRun[]): string[] {
  const groups: string[] = [];
  for (const { result } of runs)
    for (const g of Object.keys(result.labels)) if (!groups.includes(g)) groups.push(g);
  // JSON objects list integer-like keys ("3") first whatever the insertion order: re-sort for people.
  groups.sort(groupOrder);
  return groups.length > 1 ? ['all', ...groups] : groups.length === 1 ? groups : ['all'];
}

const statsOf = (r: RetrievalResult, group: string): RetrievalStats | undefined =>
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

function labelRows(m: MultiClassStats): string[][] {
  const row = (name: string, s: LabelStats) => [
    name,
    pct1(s.precision),
    pct1(s.recall),
    pct1(s.f1),
    String(s.support),
  ];
  return [
    ...Object.entries(m.labels).map(([name, s]) => row(name, s)),
    row('weighted avg', { ...m.weighted, support: m.n }),
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
  if (result.turku) {
    const t = result.turku;
    parts.push('Base labels (subsumption and flags merged into the base label):');
    parts.push(markdownTable(PRF_HEADER, labelRows(t.base), 'lrrrr'));
    parts.push(`base-label accuracy ${pct(t.base.accuracy)}`);
    parts.push('Subsumption and flags, each scored as a detection task:');
    const row = (name: string, s: LabelStats) => [
      name,
      pct1(s.precision),
      pct1(s.recall),
      pct1(s.f1),
      String(s.support),
    ];
    parts.push(
      markdownTable(
        ['marker', 'precision %', 'recall %', 'F1 %', 'support'],
        [
          row('< (subsumption)', t.subsumption['<']),
          row('> (subsumption)', t.subsumption['>']),
          row('i (minor deviation)', t.flags.i),
          row('s (style/register)', t.flags.s),
        ],
        'lrrrr',
      ),
    );
  }
  return `${parts.join('\n\n')}\n`;
}

// ------------------------------------------------------------------------------------------------- figure

const BLUES = ['#c6dbef', '#9ecae1', '#6baed6', '#4292c6', '#2171b5', '#08519c', '#08306b'];

/** `count` colours from light to dark, spread over the palette. */
function palette(count: number): string[] {
  if (count <= 1) return [BLUES[4] ?? '#2171b5'];
  const from = count >= 5 ? 0 : 1;
  return Array.from({ length: count }, (_, i) => {
    const at = Math.round(from + (i * (BLUES.length - 1 - from)) / (count - 1));
    return BLUES[at] ?? '#2171b5';
  });
}

const barPct = (v: number) => (v > 0 && v < 0.005 ? '<1%' : `${Math.round(v * 100)}%`);

export interface RetrievalSvgOptions {
  /** An exact (flat) search result over the same queries: drawn as a dashed outline at its value. */
  exact?: RetrievalResult;
  /** Name of the main result's search, shown in the legend (default 'ANN'). */
  name?: string;
  title?: string;
  /** Depths to draw (default: all depths of the main result). */
  depths?: readonly number[];
}

/** Grouped bar chart of top-N accuracy per label group, as a standalone SVG document. */
export function retrievalSvg(result: RetrievalResult, opts: RetrievalSvgOptions = {}): string {
  const name = opts.name ?? 'ANN';
  const exact = opts.exact;
  const depths = (opts.depths ?? Object.keys(result.top).map(Number)).filter(
    (d) => result.top[String(d)] !== undefined,
  );
  depths.sort((a, b) => a - b);
  const groups = groupsOf([{ name, result }]);
  const colors = palette(depths.length);
  const title = opts.title ?? 'Paraphrase retrieval: target found within the top N';

  const subtitle =
    `${result.n} queries (s1 searched, s2 the target, s1 itself excluded) · ${name}` +
    (exact ? ' solid, exact search dashed outline' : '');
  const legend = [...depths.map((d) => `top-${d}`), ...(exact ? ['exact search (value in grey)'] : [])];
  const legendW = legend.reduce((w, l) => w + 35 + l.length * 7.2, 0);

  const barW = depths.length <= 2 ? 40 : depths.length <= 4 ? 30 : 22;
  const clusterW = depths.length * barW * 1.12;
  const margin = { top: 96, right: 24, bottom: 72, left: 68 };
  // Wide enough for the bars, the title (~10.6 px a character at 17 px bold), the subtitle and the legend.
  const plotW = Math.max(
    360,
    groups.length * (clusterW + 36),
    title.length * 10.6 - margin.right,
    subtitle.length * 6.6 - margin.right,
    legendW - margin.right,
  );
  const plotH = 300;
  const width = margin.left + plotW + margin.right;
  const height = margin.top + plotH + margin.bottom;

  const x = scaleBand<string>().domain(groups).range([0, plotW]).paddingInner(0.22).paddingOuter(0.12);
  // A group's bars keep their width when there are few groups; the cluster is centred in its band.
  const cluster = Math.min(x.bandwidth(), clusterW);
  const xi = scaleBand<string>().domain(depths.map(String)).range([0, cluster]).paddingInner(0.12);
  const y = scaleLinear().domain([0, 1]).range([plotH, 0]);

  const parts: string[] = [];
  // Title, subtitle, legend.
  parts.push(text(title, { x: margin.left, y: 28, 'font-size': 17, 'font-weight': 'bold', fill: '#222' }));
  parts.push(text(subtitle, { x: margin.left, y: 48, 'font-size': 12, fill: '#555' }));
  let lx = margin.left;
  const ly = 66;
  for (const [i, d] of depths.entries()) {
    parts.push(el('rect', { x: lx, y: ly, width: 14, height: 14, fill: colors[i], rx: 2 }));
    const label = `top-${d}`;
    parts.push(text(label, { x: lx + 19, y: ly + 11.5, 'font-size': 12, fill: '#333' }));
    lx += 19 + label.length * 7.2 + 16;
  }
  if (exact) {
    parts.push(
      el('rect', {
        x: lx + 4,
        y: ly,
        width: 14,
        height: 14,
        fill: 'none',
        stroke: '#333',
        'stroke-width': 1.3,
        'stroke-dasharray': '3 2',
      }),
    );
    parts.push(
      text(legend[legend.length - 1] ?? '', { x: lx + 23, y: ly + 11.5, 'font-size': 12, fill: '#333' }),
    );
  }

  // Plot area: grid and y axis.
  const plot: string[] = [];
  for (const t of y.ticks(5)) {
    plot.push(el('line', { x1: 0, x2: plotW, y1: y(t), y2: y(t), stroke: t === 0 ? '#444' : '#e3e3e3' }));
    plot.push(
      text(`${Math.round(t * 100)}%`, {
        x: -8,
        y: y(t) + 4,
        'text-anchor': 'end',
        'font-size': 11,
        fill: '#444',
      }),
    );
  }
  plot.push(
    text('queries with the target in the top N', {
      transform: `translate(${-50} ${plotH / 2}) rotate(-90)`,
      'text-anchor': 'middle',
      'font-size': 12,
      fill: '#333',
    }),
  );

  // A faint rule sets the overall group apart from the per-label groups.
  const second = groups[1];
  if (groups[0] === 'all' && second !== undefined) {
    const sx = ((x('all') ?? 0) + x.bandwidth() + (x(second) ?? 0)) / 2;
    plot.push(
      el('line', { x1: sx, x2: sx, y1: 0, y2: plotH + 40, stroke: '#ccc', 'stroke-dasharray': '4 3' }),
    );
  }

  // Bars.
  for (const g of groups) {
    const s = statsOf(result, g);
    const se = exact ? statsOf(exact, g) : undefined;
    const gx = (x(g) ?? 0) + (x.bandwidth() - cluster) / 2;
    for (const [i, d] of depths.entries()) {
      const v = s?.top[String(d)] ?? 0;
      const ve = se?.top[String(d)];
      const bx = gx + (xi(String(d)) ?? 0);
      const bw = xi.bandwidth();
      plot.push(
        el('rect', { class: 'bar', x: bx, y: y(v), width: bw, height: plotH - y(v), fill: colors[i] }, [
          el('title', {}, [esc(`${g}, top-${d}: ${pct(v)}${ve === undefined ? '' : ` (exact ${pct(ve)})`}`)]),
        ]),
      );
      let labelY = y(v) - 4;
      if (ve !== undefined) {
        plot.push(
          el('rect', {
            class: 'exact',
            x: bx,
            y: y(ve),
            width: bw,
            height: plotH - y(ve),
            fill: 'none',
            stroke: '#333',
            'stroke-width': 1.2,
            'stroke-dasharray': '3 2',
          }),
        );
        labelY = Math.min(y(v), y(ve)) - 4;
        if (barPct(ve) !== barPct(v)) {
          plot.push(
            text(barPct(ve), {
              x: bx + bw / 2,
              y: labelY,
              'text-anchor': 'middle',
              'font-size': 9.5,
              fill: '#777',
            }),
          );
          labelY -= 12;
        }
      }
      plot.push(
        text(barPct(v), {
          x: bx + bw / 2,
          y: labelY,
          'text-anchor': 'middle',
          'font-size': 10.5,
          'font-weight': 'bold',
          fill: '#222',
        }),
      );
    }
    plot.push(
      text(g, {
        x: gx + cluster / 2,
        y: plotH + 20,
        'text-anchor': 'middle',
        'font-size': 13,
        'font-weight': 'bold',
        fill: '#222',
      }),
    );
    plot.push(
      text(`n = ${s?.n ?? 0}`, {
        x: gx + cluster / 2,
        y: plotH + 36,
        'text-anchor': 'middle',
        'font-size': 11,
        fill: '#666',
      }),
    );
  }
  plot.push(
    text('gold label of the pair', {
      x: plotW / 2,
      y: plotH + 60,
      'text-anchor': 'middle',
      'font-size': 12,
      fill: '#333',
    }),
  );
  parts.push(el('g', { transform: `translate(${margin.left} ${margin.top})` }, plot));
  return svgDocument(width, height, parts, title);
}

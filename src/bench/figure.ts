/**
 * The retrieval figure: grouped bars of top-N accuracy per label group as Kanerva et al. 2023, Fig. 11
 * (x = label group, one bar per depth, percentage on each bar). With an exact-search result too, each bar
 * is the ANN value with a dashed outline at the exact value, so the ANN loss is the gap between them.
 */
import { type ScaleBand, type ScaleLinear, scaleBand, scaleLinear } from 'd3-scale';
import type { RetrievalResult } from './metrics.js';
import { groupsOf, pct, statsOf } from './report.js';
import { type Attrs, el, esc, svgDocument, text } from './svg.js';

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

/** Everything the drawing needs: what is drawn, and where. */
interface Layout {
  result: RetrievalResult;
  exact: RetrievalResult | undefined;
  depths: number[];
  groups: string[];
  colors: string[];
  title: string;
  subtitle: string;
  legend: string[];
  margin: { top: number; right: number; bottom: number; left: number };
  plotW: number;
  plotH: number;
  /** Width of one group's cluster of bars. */
  cluster: number;
  x: ScaleBand<string>;
  xi: ScaleBand<string>;
  y: ScaleLinear<number, number>;
}

function layout(result: RetrievalResult, opts: RetrievalSvgOptions): Layout {
  const name = opts.name ?? 'ANN';
  const exact = opts.exact;
  const depths = (opts.depths ?? Object.keys(result.top).map(Number)).filter(
    (d) => result.top[String(d)] !== undefined,
  );
  depths.sort((a, b) => a - b);
  const groups = groupsOf([{ name, result }]);
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
  const x = scaleBand<string>().domain(groups).range([0, plotW]).paddingInner(0.22).paddingOuter(0.12);
  // A group's bars keep their width when there are few groups; the cluster is centred in its band.
  const cluster = Math.min(x.bandwidth(), clusterW);
  const xi = scaleBand<string>().domain(depths.map(String)).range([0, cluster]).paddingInner(0.12);
  const y = scaleLinear().domain([0, 1]).range([plotH, 0]);
  const colors = palette(depths.length);
  return {
    result,
    exact,
    depths,
    groups,
    colors,
    title,
    subtitle,
    legend,
    margin,
    plotW,
    plotH,
    cluster,
    x,
    xi,
    y,
  };
}

/** Text attributes centred on x at baseline y. */
const centred = (x: number, y: number): Attrs => ({ x, y, 'text-anchor': 'middle' });

/** Title, subtitle and the legend (one swatch per depth, and the exact outline). */
function header(l: Layout): string[] {
  const parts = [
    text(l.title, { x: l.margin.left, y: 28, 'font-size': 17, 'font-weight': 'bold', fill: '#222' }),
    text(l.subtitle, { x: l.margin.left, y: 48, 'font-size': 12, fill: '#555' }),
  ];
  let lx = l.margin.left;
  const ly = 66;
  for (const [i, d] of l.depths.entries()) {
    parts.push(el('rect', { x: lx, y: ly, width: 14, height: 14, fill: l.colors[i], rx: 2 }));
    const label = `top-${d}`;
    parts.push(text(label, { x: lx + 19, y: ly + 11.5, 'font-size': 12, fill: '#333' }));
    lx += 19 + label.length * 7.2 + 16;
  }
  if (l.exact) {
    const box = { x: lx + 4, y: ly, width: 14, height: 14 };
    parts.push(
      el('rect', { ...box, fill: 'none', stroke: '#333', 'stroke-width': 1.3, 'stroke-dasharray': '3 2' }),
    );
    parts.push(text(l.legend.at(-1) ?? '', { x: lx + 23, y: ly + 11.5, 'font-size': 12, fill: '#333' }));
  }
  return parts;
}

/** Grid lines with the y axis and its title; a faint rule between `all` and the per-label groups. */
function axes(l: Layout): string[] {
  const { y, plotW, plotH, x, groups } = l;
  const plot: string[] = [];
  for (const t of y.ticks(5)) {
    plot.push(el('line', { x1: 0, x2: plotW, y1: y(t), y2: y(t), stroke: t === 0 ? '#444' : '#e3e3e3' }));
    const tick = { x: -8, y: y(t) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#444' };
    plot.push(text(`${Math.round(t * 100)}%`, tick));
  }
  plot.push(
    text('queries with the target in the top N', {
      transform: `translate(${-50} ${plotH / 2}) rotate(-90)`,
      'text-anchor': 'middle',
      'font-size': 12,
      fill: '#333',
    }),
  );
  const second = groups[1];
  if (groups[0] === 'all' && second !== undefined) {
    const sx = ((x('all') ?? 0) + x.bandwidth() + (x(second) ?? 0)) / 2;
    plot.push(
      el('line', { x1: sx, x2: sx, y1: 0, y2: plotH + 40, stroke: '#ccc', 'stroke-dasharray': '4 3' }),
    );
  }
  return plot;
}

/** One bar: the main value, the exact value's outline and its grey label when they differ, the value. */
function bar(
  l: Layout,
  at: { x: number; w: number; color: string | undefined },
  tip: string,
  v: number,
  ve?: number,
): string[] {
  const { y, plotH } = l;
  const out = [
    el('rect', { class: 'bar', x: at.x, y: y(v), width: at.w, height: plotH - y(v), fill: at.color }, [
      el('title', {}, [esc(tip)]),
    ]),
  ];
  let labelY = y(v) - 4;
  const mid = at.x + at.w / 2;
  if (ve !== undefined) {
    const box = { class: 'exact', x: at.x, y: y(ve), width: at.w, height: plotH - y(ve) };
    out.push(
      el('rect', { ...box, fill: 'none', stroke: '#333', 'stroke-width': 1.2, 'stroke-dasharray': '3 2' }),
    );
    labelY = Math.min(y(v), y(ve)) - 4;
    if (barPct(ve) !== barPct(v)) {
      out.push(text(barPct(ve), { ...centred(mid, labelY), 'font-size': 9.5, fill: '#777' }));
      labelY -= 12;
    }
  }
  out.push(
    text(barPct(v), { ...centred(mid, labelY), 'font-size': 10.5, 'font-weight': 'bold', fill: '#222' }),
  );
  return out;
}

/** A label group: one bar per depth, then the group's name and size below the axis. */
function group(l: Layout, g: string): string[] {
  const s = statsOf(l.result, g);
  const se = l.exact ? statsOf(l.exact, g) : undefined;
  const gx = (l.x(g) ?? 0) + (l.x.bandwidth() - l.cluster) / 2;
  const out: string[] = [];
  for (const [i, d] of l.depths.entries()) {
    const v = s?.top[String(d)] ?? 0;
    const ve = se?.top[String(d)];
    const tip = `${g}, top-${d}: ${pct(v)}${ve === undefined ? '' : ` (exact ${pct(ve)})`}`;
    const at = { x: gx + (l.xi(String(d)) ?? 0), w: l.xi.bandwidth(), color: l.colors[i] };
    out.push(...bar(l, at, tip, v, ve));
  }
  const mid = gx + l.cluster / 2;
  out.push(text(g, { ...centred(mid, l.plotH + 20), 'font-size': 13, 'font-weight': 'bold', fill: '#222' }));
  out.push(text(`n = ${s?.n ?? 0}`, { ...centred(mid, l.plotH + 36), 'font-size': 11, fill: '#666' }));
  return out;
}

/** Grouped bar chart of top-N accuracy per label group, as a standalone SVG document. */
export function retrievalSvg(result: RetrievalResult, opts: RetrievalSvgOptions = {}): string {
  const l = layout(result, opts);
  const plot = [
    ...axes(l),
    ...l.groups.flatMap((g) => group(l, g)),
    text('gold label of the pair', { ...centred(l.plotW / 2, l.plotH + 60), 'font-size': 12, fill: '#333' }),
  ];
  const width = l.margin.left + l.plotW + l.margin.right;
  const height = l.margin.top + l.plotH + l.margin.bottom;
  const g = el('g', { transform: `translate(${l.margin.left} ${l.margin.top})` }, plot);
  return svgDocument(width, height, [...header(l), g], l.title);
}

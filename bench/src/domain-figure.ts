/** The precision / recall figure of the domain benchmark (like Pavlick et al. 2015, Figure 2). */
import { el, svgDocument, text } from '../../dist/bench/svg.js';

export type Curves = Record<string, { points: Array<[number, number]>; auc: number }>;

export function prSvg(cs: Curves): string {
  const W = 640;
  const H = 420;
  const L = 60;
  const T = 30;
  const PW = 420;
  const PH = 330;
  const colors = ['#444', '#1f77b4', '#2ca02c', '#ff7f0e', '#9467bd', '#d62728'];
  const maxR = Math.max(0.01, ...Object.values(cs).flatMap((c) => c.points.map((p) => p[0])));
  const x = (r: number) => L + (r / maxR) * PW;
  const y = (p: number) => T + (1 - p) * PH;
  const parts: string[] = [
    el('rect', { x: L, y: T, width: PW, height: PH, fill: 'none', stroke: '#999' }),
    text('recall of ParaSCI-ACL val pairs', {
      x: L + PW / 2,
      y: H - 10,
      'text-anchor': 'middle',
      'font-size': 12,
    }),
    text('precision', {
      x: 14,
      y: T + PH / 2,
      transform: `rotate(-90 14 ${T + PH / 2})`,
      'text-anchor': 'middle',
      'font-size': 12,
    }),
  ];
  for (let i = 0; i <= 4; i++) {
    parts.push(
      text((i / 4).toFixed(2), { x: L - 6, y: y(i / 4) + 4, 'text-anchor': 'end', 'font-size': 10 }),
    );
    parts.push(
      text(((i / 4) * maxR).toFixed(2), {
        x: x((i / 4) * maxR),
        y: T + PH + 14,
        'text-anchor': 'middle',
        'font-size': 10,
      }),
    );
  }
  Object.entries(cs).forEach(([name, c], i) => {
    const d = c.points
      .map(([r, p], j) => `${j === 0 ? 'M' : 'L'}${x(r).toFixed(1)},${y(p).toFixed(1)}`)
      .join('');
    const color = colors[i % colors.length] as string;
    if (d) parts.push(el('path', { d, fill: 'none', stroke: color, 'stroke-width': 1.5 }));
    parts.push(el('rect', { x: L + PW + 12, y: T + 6 + i * 20, width: 12, height: 3, fill: color }));
    parts.push(
      text(`${name} (AUC ${(100 * c.auc).toFixed(1)})`, {
        x: L + PW + 28,
        y: T + 11 + i * 20,
        'font-size': 10,
      }),
    );
  });
  return svgDocument(
    W + 120,
    H,
    parts,
    'Precision / recall of in-domain paraphrases (ParaSCI-ACL val) among mined pairs',
  );
}

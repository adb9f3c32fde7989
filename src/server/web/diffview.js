// One side of a pair as text with layered highlights: the word diff's spans (deleted, inserted, moved)
// and any extra marks registered with addPairMarks (e.g. a sub-sentence span, a domain term).
import { html } from './ui.js';

const OP_CLASS = { equal: '', delete: 'd-del', insert: 'd-ins', move: 'd-move' };
const OP_TITLE = {
  delete: 'only in A',
  insert: 'only in B',
  move: 'in both, at another place',
};

/** (pair, side 'a' | 'b') => [{start, end, className, title}] in UTF-16 offsets of that side's text. */
const markers = [];

/** Lets a feature highlight ranges of a pair's texts on top of the diff. */
export function addPairMarks(fn) {
  markers.push(fn);
}

export function marksOf(pair, side) {
  return markers.flatMap((fn) => fn(pair, side) ?? []);
}

function covering(ranges, at) {
  return ranges.filter((r) => r.start <= at && at < r.end);
}

/** `text` cut at every span and mark boundary, each piece with the classes of what covers it. */
export function DiffText({ text, spans = [], marks = [] }) {
  const cuts = new Set([0, text.length]);
  for (const r of [...spans, ...marks]) {
    if (r.start >= 0 && r.start <= text.length) cuts.add(r.start);
    if (r.end >= 0 && r.end <= text.length) cuts.add(r.end);
  }
  const points = [...cuts].sort((x, y) => x - y);
  const pieces = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const [from, to] = [points[i], points[i + 1]];
    const piece = text.slice(from, to);
    const span = covering(spans, from)[0];
    const extra = covering(marks, from);
    const classes = [span ? OP_CLASS[span.op] : '', ...extra.map((m) => m.className)].filter(Boolean);
    if (classes.length === 0) {
      pieces.push(piece);
      continue;
    }
    const title = [span && OP_TITLE[span.op], ...extra.map((m) => m.title)].filter(Boolean).join('; ');
    pieces.push(
      html`<span class=${classes.join(' ')} title=${title || undefined} data-move=${span?.move}>${piece}</span>`,
    );
  }
  return html`<span class="difftext">${pieces}</span>`;
}

/** Both sentences of a pair, one above the other, A's deletions and B's insertions highlighted. */
export function PairText({ pair }) {
  const d = pair.diff;
  return html`<div class="pairtext">
    <div class="side-a"><span class="side-tag">A</span>
      <${DiffText} text=${pair.s1} spans=${d?.a} marks=${marksOf(pair, 'a')} /></div>
    <div class="side-b"><span class="side-tag">B</span>
      <${DiffText} text=${pair.s2} spans=${d?.b} marks=${marksOf(pair, 'b')} /></div>
  </div>`;
}

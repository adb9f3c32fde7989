// The pair view shared by search results and job results: one row per pair with its diff, the model's
// label and every label's probability, cosine, ranks, lexical measures, metadata, and the annotation
// controls, driven from the keyboard by loop.js.
//
// Columns are a registry: a feature adds one with addPairColumn (e.g. the two sides' domain score),
// and highlights in the texts with addPairMarks (diffview.js).
import { pairKey, schemeChoice, useAnnotations } from './annotate.js';
import { ContextView, usePairContexts } from './context.js';
import { PairText } from './diffview.js';
import { useKeyLoop } from './loop.js';
import { html, num, useEffect, useRef, useState } from './ui.js';

function Probabilities({ pair }) {
  const probs = pair.probabilities;
  if (!probs) return html`<span class="muted">no reranker</span>`;
  // Bold is the served label: the positive one when P(paraphrase) reaches the labeling model's cut, which
  // need not be the likelier of the two.
  return html`<div class="probs" title="bold: the served label (P(paraphrase) at or above the model's cut)">
    ${Object.entries(probs).map(
      ([label, p]) => html`<div class=${label === pair.label ? 'prob top' : 'prob'}>
        <span class="prob-label">${label}</span>
        <span class="bar"><span class="fill" style=${{ width: `${(p * 100).toFixed(1)}%` }}></span></span>
        <span class="prob-value">${p.toFixed(3)}</span>
      </div>`,
    )}
    ${pair.labeledBy ? html`<div class="muted labeled-by">by ${pair.labeledBy}</div>` : null}
  </div>`;
}

function Meta({ meta }) {
  if (!meta || Object.keys(meta).length === 0) return null;
  return html`<dl class="meta">
    ${Object.entries(meta).map(([k, v]) => html`<dt>${k}</dt><dd>${typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd>`)}
  </dl>`;
}

/** {id, title, render(pair, row)}; `row` has index, annotation, scheme and actions. */
export const PAIR_COLUMNS = [
  { id: 'rank', title: '#', className: 'c-rank', render: (_p, row) => row.index + 1 },
  {
    id: 'pair',
    title: 'Pair (A → B)',
    className: 'c-pair',
    render: (p, row) => html`<${PairText} pair=${p} /><${ContextView} context=${row.context} />`,
  },
  {
    id: 'label',
    title: 'Model label',
    className: 'c-label',
    render: (p) => html`<${Probabilities} pair=${p} />`,
  },
  {
    id: 'scores',
    title: 'cos · ANN · rerank',
    className: 'c-scores',
    render: (p) => html`<div class="scores">
      <span title="cosine">${num(p.cosine)}</span>
      ${p.margin === undefined ? null : html`<span title="ratio margin">m ${num(p.margin)}</span>`}
      <span title="ANN rank">${p.annRank ? `#${p.annRank}` : '—'}</span>
      <span title="rank after reranking">${p.rerankRank ? `#${p.rerankRank}` : '—'}</span>
    </div>`,
  },
  {
    id: 'lexical',
    title: 'BLEU · PLR · char',
    className: 'c-lexical',
    render: (p) => html`<div class="scores">
      <span title="BLEU (both ways)">${num(p.lexical?.bleu, 1)}</span>
      <span title="PLR">${num(p.lexical?.plr, 2)}</span>
      <span title="char n-gram cosine">${num(p.lexical?.charNgramCosine, 2)}</span>
    </div>`,
  },
  {
    id: 'meta',
    title: 'Metadata',
    className: 'c-meta',
    // Both sides where both have some (a job's pairs); search results have B's only.
    render: (p) =>
      p.meta1 && p.meta2
        ? html`<div class="side-meta"><b>A</b><${Meta} meta=${p.meta1} /></div><div class="side-meta"><b>B</b><${Meta} meta=${p.meta2} /></div>`
        : html`<${Meta} meta=${p.meta2 ?? p.meta1} />`,
  },
  {
    id: 'annotation',
    title: 'Your label',
    className: 'c-annotation',
    render: (p, row) => html`<${AnnotationCell} pair=${p} row=${row} />`,
  },
];

/** Adds a column before the one with id `before` (default: before the annotation column). */
export function addPairColumn(column, before = 'annotation') {
  const at = PAIR_COLUMNS.findIndex((c) => c.id === before);
  PAIR_COLUMNS.splice(at < 0 ? PAIR_COLUMNS.length : at, 0, column);
}

function AnnotationCell({ pair, row }) {
  const [draft, setDraft] = useState('');
  const a = row.annotation;
  const submit = (e) => {
    e.preventDefault();
    if (draft.trim()) row.act(pair, 'label', draft.trim()).then(() => setDraft(''));
  };
  return html`<div class="annot">
    <div class="annot-state">
      ${a ? html`<span class=${`badge ${a.decision}`} title=${`${a.annotator ?? 'anonymous'}, ${a.at}`}>${a.label}</span>` : html`<span class="muted">—</span>`}
    </div>
    <div class="annot-buttons">
      <button type="button" class="accept" title="accept (a)" onClick=${() => row.act(pair, 'accept')}>✓</button>
      <button type="button" class="reject" title="reject (x)" onClick=${() => row.act(pair, 'reject')}>✗</button>
      <button type="button" class="context" title="show the document context (c)" aria-pressed=${Boolean(row.context)}
        onClick=${() => row.toggleContext(pair)}>¶</button>
      ${
        row.context
          ? html`<button type="button" class="in-context" title="a paraphrase in this context only: Turku's 3, saved with the context shown"
        onClick=${() => row.act(pair, 'label', '3', 'turku')}>in context</button>`
          : null
      }
      <form onSubmit=${submit} class="relabel">
        <input aria-label="label" size="6" placeholder=${row.scheme === 'turku' ? '4<i' : 'label'}
          value=${draft} onInput=${(e) => setDraft(e.currentTarget.value)} list=${`labels-${row.scheme}`} />
      </form>
    </div>
  </div>`;
}

/**
 * The table of pairs with the annotation loop. `config` is GET /v1/config; `groupBy(pair)` names a
 * group header row (the query, for search results); `auth` = {keyed, enabled}.
 */
export function PairTable({ pairs, config, auth, groupBy, caption }) {
  const schemes = config.annotation.schemes;
  const [scheme, setScheme] = useState(() => schemeChoice.get(config.annotation.default));
  const [status, setStatus] = useState('');
  const contexts = usePairContexts();
  const annotations = useAnnotations(pairs, auth, contexts.seen);
  const { focus, setFocus, act, toggleContext } = useKeyLoop({
    pairs,
    scheme,
    annotations,
    contexts,
    setStatus,
  });
  const table = useRef(null);
  useEffect(() => {
    table.current?.querySelector(`tr[data-row="${focus}"]`)?.scrollIntoView({ block: 'nearest' });
  }, [focus]);

  const chooseScheme = (s) => {
    schemeChoice.set(s);
    setScheme(s);
  };
  const rows = [];
  let group;
  pairs.forEach((p, index) => {
    const g = groupBy?.(p);
    if (g !== undefined && g !== group) {
      group = g;
      rows.push(html`<tr class="group"><th colspan=${PAIR_COLUMNS.length}>${g}</th></tr>`);
    }
    const key = pairKey(p);
    const row = {
      index,
      annotation: annotations.byKey.get(key),
      scheme,
      act,
      toggleContext,
      context: contexts.shown.get(key),
    };
    rows.push(html`<tr data-row=${index} class=${index === focus ? 'focused' : ''}
        aria-selected=${index === focus} onClick=${() => setFocus(index)}>
      ${PAIR_COLUMNS.map((c) => html`<td class=${c.className}>${c.render(p, row)}</td>`)}
    </tr>`);
  });

  return html`<section class="pairs">
    <${Toolbar} caption=${caption} schemes=${schemes} scheme=${scheme} onScheme=${chooseScheme} enabled=${auth.enabled} />
    <p class="status" role="status" aria-live="polite">${status}</p>
    <datalist id=${`labels-${scheme}`}>${schemes[scheme].labels.map((l) => html`<option value=${l} />`)}</datalist>
    <table class="pairtable" ref=${table}>
      <thead><tr>${PAIR_COLUMNS.map((c) => html`<th class=${c.className}>${c.title}</th>`)}</tr></thead>
      <tbody>${rows}</tbody>
    </table>
  </section>`;
}

function Toolbar({ caption, schemes, scheme, onScheme, enabled }) {
  return html`<div class="pairs-toolbar">
    ${caption ? html`<span class="caption">${caption}</span>` : null}
    <label>Scheme <select value=${scheme} onChange=${(e) => onScheme(e.currentTarget.value)}>
      ${Object.keys(schemes).map((s) => html`<option value=${s}>${s}</option>`)}
    </select></label>
    <span class="keys">
      <kbd>a</kbd> accept (${schemes[scheme].accept}) · <kbd>x</kbd> reject (${schemes[scheme].reject}) ·
      <kbd>c</kbd> context · <kbd>esc</kbd> leave a text box · <kbd>space</kbd>/<kbd>↓</kbd> next · <kbd>↑</kbd> previous · <kbd>⌫</kbd> undo ·
      ${scheme === 'turku' ? html`<kbd>1</kbd>–<kbd>4</kbd> label, <kbd>${'<'}</kbd> <kbd>${'>'}</kbd> <kbd>i</kbd> <kbd>s</kbd> amend` : html`<kbd>1</kbd>/<kbd>0</kbd> paraphrase / not`}
    </span>
    ${enabled ? null : html`<span class="warn">Enter an API key above to annotate.</span>`}
  </div>`;
}

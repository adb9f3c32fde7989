// A pair's document context on demand (GET /v1/sentences/{id}?context=N, for sentences read from
// documents): shown under the pair, and sent with every label saved while it is shown, so an annotator
// can say "a paraphrase in this context only" (Turku's 3) and the record keeps what they saw.
import { pairKey } from './annotate.js';
import { api } from './api.js';
import { html, useLatestMap } from './ui.js';

/** Sentences shown before and after each side. */
export const CONTEXT_SENTENCES = 2;

async function sideContext(id) {
  if (!Number.isInteger(id)) return undefined;
  const r = await api(`/v1/sentences/${id}?context=${CONTEXT_SENTENCES}`);
  if (!r.context) return undefined;
  return { before: r.context.before.map((s) => s.text), after: r.context.after.map((s) => s.text) };
}

/**
 * Which pairs show their context. `toggle(pair)` fetches it (once) or hides it and resolves to a
 * message for the status line; `seen(pair)` is what a label saved now must carry.
 */
export function usePairContexts() {
  const { map: shown, latest, put } = useLatestMap();
  async function toggle(pair) {
    const key = pairKey(pair);
    if (latest.current.has(key)) {
      put(key, undefined);
      return 'Context hidden.';
    }
    const [s1, s2] = await Promise.all([sideContext(pair.s1_id), sideContext(pair.s2_id)]);
    if (!s1 && !s2) return 'No document context: the index was not built from documents.';
    put(key, { ...(s1 ? { s1 } : {}), ...(s2 ? { s2 } : {}) });
    return 'Context shown; a label saved now keeps it.';
  }
  const seen = (pair) => latest.current.get(pairKey(pair));
  return { shown, toggle, seen };
}

function Around({ side, tag }) {
  if (!side) return null;
  return html`<div class="ctx-side"><span class="side-tag">${tag}</span>
    ${side.before.map((s) => html`<span class="ctx-before">${s} </span>`)}<span class="ctx-here">[…]</span>
    ${side.after.map((s) => html`<span class="ctx-after"> ${s}</span>`)}</div>`;
}

/** The context of both sides, under the pair. */
export function ContextView({ context }) {
  if (!context) return null;
  return html`<div class="ctx" aria-label="document context">
    <${Around} side=${context.s1} tag="A" /><${Around} side=${context.s2} tag="B" />
  </div>`;
}

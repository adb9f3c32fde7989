// Annotating pairs: the current annotator's labels of the pairs on screen (looked up once), saving a
// decision, and an undo stack (Backspace) that restores the label a pair had before, or none.
import { api } from './api.js';
import { useEffect, useLatestMap, useRef } from './ui.js';

export const pairKey = (p) => `${p.s1}\u0000${p.s2}`;

const NAME = 'paramine.annotator';
/** Who annotates when the service has no API keys (the key's name is used when it has). */
export const annotatorName = {
  get: () => localStorage.getItem(NAME) ?? '',
  set: (n) => (n ? localStorage.setItem(NAME, n) : localStorage.removeItem(NAME)),
};

const SCHEME = 'paramine.scheme';
export const schemeChoice = {
  get: (fallback) => localStorage.getItem(SCHEME) ?? fallback,
  set: (s) => localStorage.setItem(SCHEME, s),
};

function withAnnotator(body, keyed) {
  const name = annotatorName.get();
  return !keyed && name ? { ...body, annotator: name } : body;
}

/** The request body for one decision on one pair (what the pair looked like goes along). */
function annotationBody(pair, scheme, decision, label, context) {
  const body = { s1: pair.s1, s2: pair.s2, scheme, decision };
  if (context) body.context = context;
  if (label !== undefined) body.label = label;
  if (Number.isInteger(pair.s1_id)) body.s1_id = pair.s1_id;
  if (Number.isInteger(pair.s2_id)) body.s2_id = pair.s2_id;
  if (pair.label) body.predicted = pair.label;
  if (pair.probabilities) body.probabilities = pair.probabilities;
  if (pair.labeledBy) body.model = pair.labeledBy;
  if (typeof pair.cosine === 'number') body.cosine = Math.max(-1, Math.min(1, pair.cosine));
  if (pair.annRank) body.annRank = pair.annRank;
  if (pair.rerankRank) body.rerankRank = pair.rerankRank;
  if (pair.source) body.source = pair.source;
  return body;
}

/**
 * Annotation state of a list of pairs. `keyed`: the service has API keys (the key names the
 * annotator); `enabled`: this tab may write (no keys needed, or a key is held).
 */
export function useAnnotations(pairs, { keyed, enabled }, seenContext = () => undefined) {
  // Current between renders too: keys pressed in quick succession must see each other's saves.
  const { map: byKey, latest, put, replace } = useLatestMap();
  const undoStack = useRef([]);

  useEffect(() => {
    replace(new Map());
    undoStack.current = [];
    if (!enabled || pairs.length === 0) return;
    let stale = false;
    (async () => {
      const found = new Map();
      for (let i = 0; i < pairs.length; i += 500) {
        const chunk = pairs.slice(i, i + 500);
        const body = withAnnotator({ pairs: chunk.map((p) => ({ s1: p.s1, s2: p.s2 })) }, keyed);
        const r = await api('/v1/annotations/lookup', { method: 'POST', body });
        r.annotations.forEach((a, j) => {
          if (a) found.set(pairKey(chunk[j]), a);
        });
      }
      if (!stale) replace(found);
    })().catch(() => undefined);
    return () => {
      stale = true;
    };
  }, [pairs, enabled, keyed]);

  const get = (pair) => latest.current.get(pairKey(pair));

  async function save(pair, scheme, decision, label) {
    const key = pairKey(pair);
    const body = withAnnotator(annotationBody(pair, scheme, decision, label, seenContext(pair)), keyed);
    const record = await api('/v1/annotations', { method: 'POST', body });
    undoStack.current.push({ pair, before: latest.current.get(key) ?? null });
    put(key, record);
    return record;
  }

  /** Undoes the last save; resolves to the pair it touched, or null when there is nothing to undo. */
  async function undo() {
    const last = undoStack.current.pop();
    if (!last) return null;
    const key = pairKey(last.pair);
    const current = latest.current.get(key);
    if (last.before) {
      const b = last.before;
      const body = withAnnotator(annotationBody(last.pair, b.scheme, 'label', b.label, b.context), keyed);
      put(key, await api('/v1/annotations', { method: 'POST', body: { ...body, decision: b.decision } }));
    } else if (current) {
      await api(`/v1/annotations/${current.id}`, { method: 'DELETE' });
      put(key, null);
    }
    return last.pair;
  }

  return { byKey, get, save, undo };
}

const TURKU = /^([1-4])([<>]?)([is]*)$/;

/** A Turku label with one part changed: `<`/`>` toggles the direction, `i`/`s` toggle a flag. */
export function amendTurku(label, key) {
  const m = TURKU.exec(label ?? '');
  if (!m) return undefined;
  let [, base, sub, flags] = m;
  if (key === '<' || key === '>') sub = sub === key ? '' : key;
  else if (flags.includes(key)) flags = flags.replace(key, '');
  else flags = [...new Set(flags + key)].sort().join('');
  return `${base}${sub}${flags}`;
}

// preact + htm, and small pieces every view uses.

import { useRef, useState } from '/vendor/hooks.mjs';
import htm from '/vendor/htm.mjs';
import { h } from '/vendor/preact.mjs';

export { useCallback, useEffect, useMemo, useRef, useState } from '/vendor/hooks.mjs';
export { render } from '/vendor/preact.mjs';
export const html = htm.bind(h);

/**
 * A Map in state that is current between renders too: handlers that run in quick succession (keys
 * pressed fast) see each other's writes. `put(key, value)` sets, or deletes for null / undefined.
 */
export function useLatestMap() {
  const [map, setMap] = useState(() => new Map());
  const latest = useRef(map);
  const replace = (m) => {
    latest.current = m;
    setMap(m);
  };
  const put = (key, value) => {
    const next = new Map(latest.current);
    if (value === null || value === undefined) next.delete(key);
    else next.set(key, value);
    replace(next);
  };
  return { map, latest, put, replace };
}

/** A number with at most `digits` decimals, or an em dash for null/undefined. */
export function num(x, digits = 3) {
  if (x === null || x === undefined || Number.isNaN(x)) return '—';
  return Number.isInteger(x) ? String(x) : x.toFixed(digits);
}

export function duration(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 120) return `${seconds.toFixed(1)} s`;
  const m = Math.floor(seconds / 60);
  return m < 120 ? `${m} min ${Math.round(seconds % 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function Alert({ error, onClose }) {
  if (!error) return null;
  return html`<div class="alert" role="alert">
    <span>${error}</span>
    ${onClose ? html`<button class="link" onClick=${onClose} aria-label="dismiss">×</button>` : null}
  </div>`;
}

/** A labeled form field. */
export function Field({ label, hint, children }) {
  return html`<label class="field"><span class="field-label" title=${hint}>${label}</span>${children}</label>`;
}

/** Value of a number input: a number, or undefined when empty. */
export function numberOf(value) {
  if (value === '' || value === undefined || value === null) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

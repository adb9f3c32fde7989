// The annotation loop from the keyboard (Prodigy-like): a accept, x reject, space or arrows to move,
// Backspace undo, digits for labels, < > i s to amend a Turku label, c for the document context, Esc to
// leave a text box.
import { amendTurku } from './annotate.js';
import { explain } from './api.js';
import { useEffect, useRef, useState } from './ui.js';

const typing = (el) => el && ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName);

/** What a key does in the loop, or undefined when it is not one of the loop's keys. */
function keyAction(key, scheme) {
  if (key === 'a') return { decision: 'accept', advance: true };
  if (key === 'x') return { decision: 'reject', advance: true };
  if (key === ' ' || key === 'ArrowDown' || key === 'j' || key === 'Enter') return { move: 1 };
  if (key === 'ArrowUp' || key === 'k') return { move: -1 };
  if (key === 'Backspace') return { undo: true };
  if (key === 'c') return { context: true };
  if (scheme === 'binary' && (key === '1' || key === '0'))
    return { decision: 'label', label: key === '1' ? 'paraphrase' : 'not_paraphrase' };
  if (scheme === 'turku' && /^[1-4]$/.test(key)) return { decision: 'label', label: key };
  if (scheme === 'turku' && ['<', '>', 'i', 's'].includes(key)) return { amend: key };
  return undefined;
}

/**
 * Focus and keys over `pairs`. `annotations` is useAnnotations(); `act(pair, decision, label)` saves
 * and reports through setStatus. Keys are handled one after another against the latest focus and
 * labels, not those of the last render: a fast typist's ↑ then 0 must label the pair ↑ moved to.
 */
export function useKeyLoop({ pairs, scheme, annotations, contexts, setStatus }) {
  const [focus, setFocusState] = useState(0);
  const focusRef = useRef(0);
  const queue = useRef(Promise.resolve());
  const setFocus = (i) => {
    focusRef.current = Math.max(0, Math.min(pairs.length - 1, i));
    setFocusState(focusRef.current);
  };
  useEffect(() => setFocus(0), [pairs]);

  async function act(pair, decision, label, inScheme = scheme) {
    try {
      const r = await annotations.save(pair, inScheme, decision, label);
      setStatus(`Saved “${r.label}” for pair ${pairs.indexOf(pair) + 1}.`);
      return r;
    } catch (e) {
      setStatus(explain(e));
      throw e;
    }
  }

  async function undo() {
    const back = await annotations.undo().catch((err) => setStatus(explain(err)));
    if (back) {
      setFocus(pairs.indexOf(back));
      setStatus(`Undone: pair ${pairs.indexOf(back) + 1}.`);
    } else if (back === null) setStatus('Nothing to undo.');
  }

  async function toggleContext(pair) {
    setStatus(await contexts.toggle(pair).catch((e) => explain(e)));
  }

  async function perform(action) {
    const pair = pairs[focusRef.current];
    if (action.move) setFocus(focusRef.current + action.move);
    else if (action.undo) await undo();
    else if (action.context) await toggleContext(pair);
    else if (action.amend) {
      const label = amendTurku(annotations.get(pair)?.label, action.amend);
      if (label === undefined) setStatus('Type a label 1-4 first, then < > i s to amend it.');
      else await act(pair, 'label', label).catch(() => undefined);
    } else {
      await act(pair, action.decision, action.label).catch(() => undefined);
      if (action.advance) setFocus(focusRef.current + 1);
    }
  }

  function onKey(e) {
    if (e.key === 'Escape' && typing(document.activeElement)) return document.activeElement.blur();
    if (e.ctrlKey || e.metaKey || e.altKey || typing(document.activeElement) || pairs.length === 0) return;
    const action = keyAction(e.key, scheme);
    if (!action) return;
    e.preventDefault();
    queue.current = queue.current.then(() => perform(action));
  }

  useEffect(() => {
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  return { focus, setFocus, act, toggleContext };
}

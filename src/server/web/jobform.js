// The new-job form, rendered from the contract's JobRequest schema (schema-form.js): every field of the
// job API has a control, grouped into sections, with the schema's description as its hint. The most used
// fields are open; the rest sit in closed sections.
import { api, explain } from './api.js';
import { bodyOf, initialState, itemsOf, jobForm } from './schema-form.js';
import { Alert, html, useEffect, useState } from './ui.js';

/** Top-level fields by section; a field the schema gains later lands in "More" until it is placed. */
const SECTIONS = [
  ['Job', ['scope', 'k', 'minCosine', 'preset', 'rerank', 'cluster'], true],
  ['Pairs between', ['withinGroup', 'excludeSame', 'excludeSameGroup', 'window', 'docPairs', 'domain']],
  ['Filters', ['filter', 'margin', 'subSentence', 'negatives']],
  ['Search', ['nprobe', 'recall', 'exactMax', 'batchSize', 'index']],
  ['New sentences only', ['since', 'reverseDepth', 'untilId']],
];

const short = (hint) => (hint ? hint.split(/(?<=\.)\s/)[0] : undefined);

function Leaf({ c, state, set }) {
  const v = state.values[c.id];
  const on = (e) =>
    set('values', c.id, c.kind === 'boolean' ? e.currentTarget.checked : e.currentTarget.value);
  if (c.kind === 'boolean')
    return html`<label class="check" title=${c.hint}><input type="checkbox" name=${c.id} checked=${Boolean(v)} onChange=${on} /> ${c.label}</label>`;
  let input;
  if (c.kind === 'enum')
    input = html`<select name=${c.id} value=${v ?? ''} onChange=${on}>
      <option value="">${c.default === undefined ? 'none' : `default (${c.default})`}</option>
      ${c.options.map((o) => html`<option value=${o}>${o}</option>`)}
    </select>`;
  else if (c.kind === 'lines')
    input = html`<textarea name=${c.id} rows="3" placeholder="one a line" value=${v ?? ''} onInput=${on}></textarea>`;
  else {
    const number = c.kind === 'number' || c.kind === 'integer';
    const placeholder =
      c.default !== undefined
        ? String(c.default)
        : c.kind === 'list'
          ? 'a, b'
          : c.kind === 'map'
            ? 'label=0.5, …'
            : c.format === 'date-time'
              ? '2026-01-31T00:00:00Z'
              : '';
    input = html`<input name=${c.id} type=${number ? 'number' : 'text'} step=${c.kind === 'integer' ? '1' : 'any'}
      min=${c.min} max=${c.max} placeholder=${placeholder} value=${v ?? ''} onInput=${on} />`;
  }
  return html`<label class="field"><span class="field-label" title=${c.hint}>${c.label}${c.required ? ' *' : ''}</span>${input}</label>`;
}

function Control({ c, state, set }) {
  if (c.kind === 'object') {
    const body = html`<div class="options">${c.children.map((x) => html`<${Control} key=${x.id} c=${x} state=${state} set=${set} />`)}</div>`;
    if (!c.optional)
      return html`<fieldset class="group" data-id=${c.id}><legend title=${c.hint}>${c.label}</legend>${body}</fieldset>`;
    const open = Boolean(state.on[c.id]);
    return html`<fieldset class="group" data-id=${c.id}><legend title=${c.hint}><label class="check">
        <input type="checkbox" name=${`${c.id}?`} checked=${open} onChange=${(e) => set('on', c.id, e.currentTarget.checked)} /> ${c.label}
      </label></legend>${open ? body : html`<span class="muted">${short(c.hint) ?? ''}</span>`}</fieldset>`;
  }
  if (c.kind === 'union') {
    const chosen = c.variants.find((v) => v.name === state.variant[c.id]);
    return html`<fieldset class="group" data-id=${c.id}><legend title=${c.hint}>${c.label}</legend>
      <div class="options"><select name=${`${c.id}|`} value=${state.variant[c.id] ?? ''} onChange=${(e) => set('variant', c.id, e.currentTarget.value || undefined)}>
        ${c.default === undefined ? html`<option value="">none</option>` : null}
        ${c.variants.map((v) => html`<option value=${v.name}>${v.name}</option>`)}
      </select>
      ${chosen ? chosen.control.children.map((x) => html`<${Control} key=${x.id} c=${x} state=${state} set=${set} />`) : null}</div>
    </fieldset>`;
  }
  if (c.kind === 'items') {
    const n = state.count[c.id] ?? 0;
    return html`<fieldset class="group" data-id=${c.id}><legend title=${c.hint}>${c.label} (${n})</legend>
      ${itemsOf(c, state).map((item) => html`<${Control} key=${item.id} c=${item} state=${state} set=${set} />`)}
      <button type="button" name=${`${c.id}+`} onClick=${() => set('count', c.id, n + 1)}>add</button>
      ${n > 0 ? html`<button type="button" onClick=${() => set('count', c.id, n - 1)}>remove last</button>` : null}
    </fieldset>`;
  }
  return html`<${Leaf} c=${c} state=${state} set=${set} />`;
}

export function NewJob({ onCreated }) {
  const [form, setForm] = useState(null);
  const [state, setState] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    api('/openapi.json')
      .then((doc) => {
        const f = jobForm(doc);
        setForm(f);
        setState(initialState(f.root));
      })
      .catch((e) => setError(explain(e)));
  }, []);
  if (!form) return html`<div class="job-form"><${Alert} error=${error} /></div>`;
  const set = (part, id, value) => setState((s) => ({ ...s, [part]: { ...s[part], [id]: value } }));
  async function submit(e) {
    e.preventDefault();
    setError('');
    try {
      onCreated(await api('/v1/jobs', { method: 'POST', body: bodyOf(form.root, state) }));
    } catch (err) {
      setError(explain(err));
    }
  }
  const placed = new Set(SECTIONS.flatMap(([, keys]) => keys));
  const byKey = new Map(form.root.children.map((c) => [c.key, c]));
  const sections = [
    ...SECTIONS,
    ['More', form.root.children.map((c) => c.key).filter((k) => !placed.has(k))],
  ];
  return html`<form class="job-form" onSubmit=${submit}>
    <h2>New mining job</h2>
    ${sections.map(([title, keys, open]) => {
      const cs = keys.map((k) => byKey.get(k)).filter(Boolean);
      if (cs.length === 0) return null;
      const body = cs.map((c) => html`<${Control} key=${c.id} c=${c} state=${state} set=${set} />`);
      return html`<details class="section" open=${Boolean(open)}><summary>${title}</summary><div class="options">${body}</div></details>`;
    })}
    <div class="options"><button type="submit" class="primary">Start job</button></div>
    <${Alert} error=${error} onClose=${() => setError('')} />
  </form>`;
}

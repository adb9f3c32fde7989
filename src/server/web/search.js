// Search: one or many sentences (one a line), the search options and lexical filters, and the
// candidates in the pair view, grouped by query.
import { api, explain } from './api.js';
import { PairTable } from './pairs.js';
import { Alert, Field, html, num, numberOf, useState } from './ui.js';

const FILTER_FIELDS = [
  ['minTokens', 'min tokens', 'at least this many tokens a side'],
  ['minChars', 'min chars', 'at least this many characters a side'],
  ['bleuMin', 'BLEU >', 'BLEU above (ParaTag: 5)'],
  ['bleuMax', 'BLEU ≤', 'BLEU at most (MultiPIT: 14)'],
  ['plrMax', 'PLR <', 'length difference ratio below (ParaSCI: 1.0)'],
  ['lengthRatioMax', 'length ratio <', 'longer / shorter below (ParaTag: 2.5)'],
];

/** Search candidates as pairs: the query is side A. */
function toPairs(results) {
  return results.flatMap((r) =>
    r.candidates.map((c) => ({
      s1: r.query,
      s2: c.text,
      s2_id: c.id,
      label: c.label,
      probabilities: c.probabilities,
      labeledBy: c.labeledBy,
      cosine: c.cosine,
      annRank: c.annRank,
      rerankRank: c.rerankRank,
      lexical: c.lexical,
      meta2: c.meta,
      diff: c.diff,
      source: { kind: 'search' },
    })),
  );
}

function requestOf(form, config) {
  const texts = form.text
    .split('\n')
    .map((t) => t.trim())
    .filter(Boolean);
  const body = { texts, k: numberOf(form.k) ?? 10, rerank: form.rerank, diff: true };
  for (const k of ['candidates', 'nprobe', 'minProbability', 'minCosine']) {
    const v = numberOf(form[k]);
    if (v !== undefined) body[k] = v;
  }
  if (form.rerank && config.reranker && form.labels.length > 0) body.labels = form.labels;
  const filter = {};
  for (const [k] of FILTER_FIELDS) {
    const v = numberOf(form.filter[k]);
    if (v !== undefined) filter[k] = v;
  }
  body.filter = filter;
  return body;
}

/** The query box and the options; calls onSearch(body) with the request. */
function SearchForm({ config, busy, onSearch }) {
  const presets = config.jobs.presets;
  const [form, setForm] = useState({
    text: '',
    k: String(config.search.defaults.k),
    candidates: '',
    nprobe: '',
    rerank: config.search.defaults.rerank,
    labels: [],
    minProbability: '',
    minCosine: '',
    filter: {},
  });
  const set = (k) => (e) => setForm({ ...form, [k]: e.currentTarget.value });
  const setFilter = (k) => (e) =>
    setForm({ ...form, filter: { ...form.filter, [k]: e.currentTarget.value } });
  const applyPreset = (name) =>
    setForm({
      ...form,
      filter: Object.fromEntries(Object.entries(presets[name] ?? {}).map(([k, v]) => [k, String(v)])),
    });
  const toggleLabel = (l) =>
    setForm({
      ...form,
      labels: form.labels.includes(l) ? form.labels.filter((x) => x !== l) : [...form.labels, l],
    });
  const submit = (e) => {
    e.preventDefault();
    onSearch(requestOf(form, config));
  };
  const onQueryKey = (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) submit(e);
  };

  return html`<form class="search-form" onSubmit=${submit}>
      <textarea id="query" rows="3" placeholder="A sentence to find paraphrases of (one a line for several; Ctrl+Enter searches)"
        value=${form.text} onInput=${set('text')} onKeyDown=${onQueryKey} aria-label="query"></textarea>
      <div class="options">
        <${Field} label="k" hint="candidates returned per query"><input type="number" min="1" max=${config.search.limits.maxK} name="k" value=${form.k} onInput=${set('k')} /></${Field}>
        <${Field} label="candidates" hint="ANN neighbours fetched and reranked"><input type="number" min="1" max=${config.search.limits.maxCandidates} name="candidates" value=${form.candidates} onInput=${set('candidates')} placeholder="auto" /></${Field}>
        ${config.search.ivf ? html`<${Field} label="nprobe" hint="IVF lists visited per shard"><input type="number" min="1" name="nprobe" value=${form.nprobe} onInput=${set('nprobe')} placeholder=${config.search.defaults.nprobe ?? 'index'} /></${Field}>` : null}
        <${Field} label="min cosine"><input type="number" step="0.01" min="-1" max="1" value=${form.minCosine} onInput=${set('minCosine')} /></${Field}>
        <label class="check"><input type="checkbox" name="rerank" checked=${form.rerank} disabled=${!config.reranker}
          onChange=${(e) => setForm({ ...form, rerank: e.currentTarget.checked })} /> rerank</label>
        ${
          config.reranker && form.rerank
            ? html`<fieldset class="labels"><legend>labels</legend>
              ${config.reranker.labels.map((l) => html`<label class="check"><input type="checkbox" checked=${form.labels.includes(l)} onChange=${() => toggleLabel(l)} /> ${l}</label>`)}
              <${Field} label="min p"><input type="number" step="0.05" min="0" max="1" value=${form.minProbability} onInput=${set('minProbability')} /></${Field}>
            </fieldset>`
            : null
        }
      </div>
      <div class="options filters">
        <${Field} label="preset"><select onChange=${(e) => applyPreset(e.currentTarget.value)}>
          <option value="">none</option>${Object.keys(presets).map((p) => html`<option value=${p}>${p}</option>`)}
        </select></${Field}>
        ${FILTER_FIELDS.map(([k, label, hint]) => html`<${Field} label=${label} hint=${hint}><input type="number" step="any" min="0" value=${form.filter[k] ?? ''} onInput=${setFilter(k)} /></${Field}>`)}
        <button type="submit" class="primary" disabled=${busy}>${busy ? 'Searching…' : 'Search'}</button>
      </div>
    </form>`;
}

export function SearchView({ config, auth }) {
  const [result, setResult] = useState(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  async function run(body) {
    if (body.texts.length === 0) return setError('Type a sentence to search for (one a line for several).');
    setBusy(true);
    setError('');
    const started = performance.now();
    try {
      const r = await api('/v1/search', { method: 'POST', body });
      const ms = performance.now() - started;
      setResult({ pairs: toPairs(r.results), timings: r.timings, ms, n: body.texts.length });
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  }

  return html`<div class="view search">
    <${SearchForm} config=${config} busy=${busy} onSearch=${run} />
    <${Alert} error=${error} onClose=${() => setError('')} />
    ${
      result
        ? html`<p class="timings muted">${result.pairs.length} candidates for ${result.n} ${result.n === 1 ? 'query' : 'queries'} in ${num(result.ms, 0)} ms
          (encode ${num(result.timings.encodeMs, 1)}, search ${num(result.timings.searchMs, 1)}, rerank ${num(result.timings.rerankMs, 1)} ms)</p>
        <${PairTable} pairs=${result.pairs} config=${config} auth=${auth} groupBy=${(p) => p.s1} />`
        : null
    }
  </div>`;
}

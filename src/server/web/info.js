// The annotations page (counts, export for training, the latest labels) and the index page (manifest,
// models, defaults and a few live metrics from /metrics).
import { api, download, explain } from './api.js';
import { Alert, html, num, useEffect, useState } from './ui.js';

/** How the model's label and the cosine do on the annotators' labels (GET /v1/annotations/report). */
function ModelReport({ report }) {
  if (!report || report.pairs === 0) return null;
  const pct = (x) => `${(100 * x).toFixed(1)}%`;
  const cut = (name, c) =>
    c
      ? html`<tr><td>${name}</td><td>${c.threshold}</td><td>${pct(c.precision)}</td><td>${pct(c.recall)}</td><td>${pct(c.f1)}</td></tr>`
      : null;
  const a = report.agreement;
  return html`<h3>The model on your labels</h3>
    <p class="muted">${report.pairs} pairs with a majority label (${report.positives} paraphrases, ${report.ties} ties left
      out); the model's probability and the cosine as they were when each pair was judged.
      <code>paramine annotations threshold</code> writes the best cut into a copy of the model for this index.</p>
    <table class="report"><thead><tr><th>score</th><th>best cut</th><th>precision</th><th>recall</th><th>F1</th></tr></thead>
      <tbody>${cut('model P(paraphrase)', report.best.model)}${cut('cosine alone', report.best.cosine)}</tbody></table>
    ${
      a.shared > 0
        ? html`<p>Agreement on ${a.shared} pairs labeled by several people: Krippendorff's α ${a.alpha.binary ?? '–'}
          (paraphrase or not), ${a.alpha.labels ?? '–'} (labels)${a.kappa.map(
            (k) => html` · κ ${k.a || 'anonymous'}/${k.b || 'anonymous'} ${k.binary} on ${k.pairs}`,
          )}</p>`
        : null
    }`;
}

export function AnnotationsView({ config }) {
  const [summary, setSummary] = useState(null);
  const [report, setReport] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    api('/v1/annotations/summary?recent=30')
      .then(setSummary)
      .catch((e) => setError(explain(e)));
    api('/v1/annotations/report')
      .then(setReport)
      .catch((e) => setError(explain(e)));
  }, []);
  const get = (scheme, format) =>
    download(`/v1/annotations?format=${format}&scheme=${scheme}`, `annotations-${scheme}.${format}`).catch(
      (e) => setError(explain(e)),
    );
  return html`<div class="view annotations">
    <h2>Annotations</h2>
    <${Alert} error=${error} />
    ${
      summary
        ? html`<p><b class="total">${summary.total}</b> pairs labeled
          ${Object.entries(summary.byAnnotator).map(([a, n]) => html` · ${a || 'anonymous'} ${n}`)}</p>
        <table class="counts"><thead><tr><th>scheme</th><th>label</th><th>pairs</th></tr></thead>
          <tbody>${Object.entries(summary.byLabel).map(([k, n]) => {
            const [scheme, label] = k.split(':');
            return html`<tr><td>${scheme}</td><td>${label}</td><td>${n}</td></tr>`;
          })}</tbody></table>`
        : null
    }
    <${ModelReport} report=${report} />
    <h3>Export for training</h3>
    <p class="muted">Pair files that <code>paramine-train sbert --pairs</code>, <code>paramine bench</code> and the
      other pair readers take: one label scheme a file.</p>
    <div class="exports">
      ${Object.keys(config.annotation.schemes).map(
        (s) => html`<span>${s}: <button type="button" onClick=${() => get(s, 'jsonl')}>JSONL</button>
          <button type="button" onClick=${() => get(s, 'tsv')}>TSV</button></span>`,
      )}
    </div>
    <h3>Latest</h3>
    ${
      summary?.recent.length
        ? html`<table class="recent"><thead><tr><th>A</th><th>B</th><th>label</th><th>by</th><th>when</th></tr></thead>
          <tbody>${summary.recent.map(
            (a) => html`<tr><td>${a.s1}</td><td>${a.s2}</td>
            <td><span class=${`badge ${a.decision}`}>${a.label}</span> <span class="muted">${a.scheme}</span></td>
            <td>${a.annotator ?? '—'}</td><td>${new Date(a.at).toLocaleString()}</td></tr>`,
          )}</tbody></table>`
        : html`<p class="muted">Nothing labeled yet: search, then press a or x on a candidate.</p>`
    }
  </div>`;
}

/** A few series of the Prometheus text format, summed over their labels. */
function parseMetrics(text) {
  const sums = {};
  const byRoute = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.trim()) continue;
    const m = /^([a-zA-Z_:]+)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (!m) continue;
    const [, name, labels, value] = m;
    sums[name] = (sums[name] ?? 0) + Number(value);
    if (name === 'paramine_http_request_duration_seconds_count') {
      const route = /route="([^"]*)"/.exec(labels ?? '')?.[1] ?? '?';
      byRoute[route] = (byRoute[route] ?? 0) + Number(value);
    }
    const stage = /stage="([^"]*)"/.exec(labels ?? '')?.[1];
    if (stage) sums[`${name}{${stage}}`] = Number(value);
  }
  return { sums, byRoute };
}

function LiveMetrics() {
  const [m, setM] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    let live = true;
    const load = () =>
      fetch('/metrics', { headers: authHeader() })
        .then((r) => (r.ok ? r.text() : Promise.reject(new Error(`HTTP ${r.status}`))))
        .then((t) => live && setM(parseMetrics(t)))
        .catch((e) => live && setError(`metrics: ${e.message}`));
    load();
    const timer = setInterval(load, 5000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);
  if (error) return html`<p class="muted">${error}</p>`;
  if (!m) return null;
  const s = m.sums;
  const mean = (stage) => {
    const c = s[`paramine_stage_duration_seconds_count{${stage}}`];
    return c ? `${num((1000 * s[`paramine_stage_duration_seconds_sum{${stage}}`]) / c, 2)} ms` : '—';
  };
  return html`<table class="kv metrics"><tbody>
    <tr><th>requests</th><td>${Object.entries(m.byRoute).map(([r, n]) => html`<span class="pill">${r} ${n}</span>`)}</td></tr>
    <tr><th>candidates returned</th><td>${s.paramine_candidates_returned_total ?? 0}</td></tr>
    <tr><th>mean encode / search / rerank</th><td>${mean('encode')} / ${mean('search')} / ${mean('rerank')}</td></tr>
    <tr><th>encoder queue</th><td>${s.paramine_encoder_queue_depth ?? 0}</td></tr>
    <tr><th>resident memory</th><td>${num((s.paramine_process_resident_memory_bytes ?? 0) / 2 ** 20, 0)} MiB</td></tr>
  </tbody></table>`;
}

function authHeader() {
  const key = sessionStorage.getItem('paramine.apiKey');
  return key ? { authorization: `Bearer ${key}` } : {};
}

/** The measured operating points (paramine tune): what a search's `recall` picks from. */
function OperatingPoints({ points, search, tuning, factory }) {
  if (!/IVF\d/.test(factory ?? '')) {
    return html`<h3>Operating points</h3><p class="muted operating-points">Exact search (${factory}): recall 1 at any setting.</p>`;
  }
  if (points.length === 0) {
    return html`<h3>Operating points</h3><p class="muted operating-points">Not measured: run <code>paramine tune --index DIR</code>.</p>`;
  }
  const isDefault = (p) =>
    p.nprobe === search.nprobe && p.kFactor === search.kFactor && p.efSearch === search.efSearch;
  return html`<h3>Operating points</h3>
    <p class="muted">recall@${tuning?.k ?? 10} against exact search on ${tuning?.queries ?? '?'} held-out sentences;
      single-query latency of the index alone. A search's <code>recall</code> picks the cheapest row reaching it.</p>
    <table class="operating-points"><thead><tr><th>nprobe</th><th>efSearch</th><th>k-factor</th><th>recall</th><th>p50</th><th>p99</th><th></th></tr></thead>
      <tbody>${points.map(
        (
          p,
        ) => html`<tr class=${isDefault(p) ? 'default' : ''}><td>${p.nprobe}</td><td>${p.efSearch ?? '—'}</td><td>${p.kFactor}</td>
          <td>${num(p.recall, 3)}</td><td>${num(p.p50Ms, 2)} ms</td><td>${num(p.p99Ms, 2)} ms</td>
          <td>${isDefault(p) ? html`<span class="pill">default</span>` : ''}</td></tr>`,
      )}</tbody></table>`;
}

/** Writes since the build: added / deleted, growing vs sealed, and whether a rebuild would pay (drift). */
function UpdatesRows({ updates: u }) {
  // htm drops the line break between text and a tag: the spaces are explicit.
  return html`<tr><th>since the build</th><td class="updates">${u.added} added${' '}<span class="muted">(${u.growing} in the growing segment, ${u.sealed.sentences} in ${u.sealed.segments} sealed)</span>, ${u.deleted} deleted</td></tr>
    ${
      u.drift
        ? html`<tr><th>drift</th><td class=${u.drift.retrain ? 'drift retrain' : 'drift'}>
            ${u.drift.retrain ? html`<span class="pill warn">rebuild would pay</span> ` : null}${u.drift.reason}</td></tr>`
        : null
    }`;
}

export function IndexView({ config }) {
  const [info, setInfo] = useState(null);
  const [error, setError] = useState('');
  useEffect(() => {
    api('/v1/index')
      .then(setInfo)
      .catch((e) => setError(explain(e)));
  }, []);
  const mf = info?.manifest;
  return html`<div class="view index">
    <h2>Index</h2>
    <${Alert} error=${error} />
    ${
      mf
        ? html`<table class="kv"><tbody>
          <tr><th>directory</th><td><code>${info.dir}</code></td></tr>
          <tr><th>sentences</th><td class="sentences">${info.sentences}</td></tr>
          <tr><th>encoder</th><td>${mf.model?.id} <span class="muted">(${mf.dim}-d, ${mf.metric})</span></td></tr>
          <tr><th>reranker labels</th><td>${config.reranker ? config.reranker.labels.join(', ') : 'no reranker'}</td></tr>
          <tr><th>FAISS</th><td><code>${mf.factory}</code> ${mf.faissVersion ? html`<span class="muted">${mf.faissVersion}</span>` : null}</td></tr>
          <tr><th>shards</th><td>${(mf.shards ?? []).map((s) => html`<span class="pill">${s.file ?? ''} ${s.count ?? s.ntotal ?? ''}</span>`)}</td></tr>
          <tr><th>search defaults</th><td>nprobe ${mf.search?.nprobe ?? '—'}${mf.search?.efSearch ? `, efSearch ${mf.search.efSearch}` : ''}, k-factor ${mf.search?.kFactor ?? '—'}, k ${config.search.defaults.k}</td></tr>
          <tr><th>limits</th><td>${Object.entries(config.search.limits).map(([k, v]) => html`<span class="pill">${k} ${v}</span>`)}</td></tr>
          <tr><th>created</th><td>${mf.createdAt}</td></tr>
          ${info.updates ? html`<${UpdatesRows} updates=${info.updates} />` : null}
        </tbody></table>`
        : null
    }
    ${mf ? html`<${OperatingPoints} points=${info.operatingPoints ?? []} search=${mf.search} tuning=${mf.tuning} factory=${mf.factory} />` : null}
    <h3>Live</h3>
    <${LiveMetrics} />
  </div>`;
}

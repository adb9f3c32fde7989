// Mining jobs: start one (jobform.js: every field of the job API), the list, and a job's
// page with live progress (server-sent events), cancel, NDJSON download, its pairs in the pair view
// (paged), its clusters, and its review: the least sure labels first with the index's precision and recall
// estimated from the annotations so far.
import { api, download, events, explain, ndjson } from './api.js';
import { NewJob } from './jobform.js';
import { PairTable } from './pairs.js';
import { Alert, duration, html, num, useEffect, useState } from './ui.js';

const PAGE = 50;
const FINISHED = ['done', 'failed', 'cancelled'];

function Progress({ job }) {
  // A stage before mining (document alignment) shows its own progress while it runs.
  if (job.stage) {
    const { name, done, total } = job.stage;
    const part = total > 0 ? (100 * done) / total : 0;
    return html`<div class="progress stage" title=${`${name}: ${done} / ${total}`}>
      <progress max="100" value=${part}></progress> <span class="pct">${name} ${part.toFixed(1)}%</span>
    </div>`;
  }
  const pct = job.total > 0 ? (100 * job.processed) / job.total : job.state === 'done' ? 100 : 0;
  return html`<div class="progress" title=${`${job.processed} / ${job.total}`}>
    <progress max="100" value=${pct}></progress> <span class="pct">${pct.toFixed(pct === 100 ? 0 : 1)}%</span>
  </div>`;
}

export function JobsView({ navigate }) {
  const [jobs, setJobs] = useState([]);
  const [error, setError] = useState('');
  useEffect(() => {
    let live = true;
    const load = () =>
      api('/v1/jobs')
        .then((r) => live && setJobs(r.jobs.slice().reverse()))
        .catch((e) => live && setError(explain(e)));
    load();
    const timer = setInterval(load, 2000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);
  return html`<div class="view jobs">
    <${NewJob} onCreated=${(job) => navigate(`#/jobs/${job.id}`)} />
    <${Alert} error=${error} />
    <h2>Jobs</h2>
    ${
      jobs.length === 0
        ? html`<p class="muted">No jobs yet.</p>`
        : html`<table class="jobs-table">
      <thead><tr><th>job</th><th>state</th><th>progress</th><th>pairs</th><th>rate</th><th>ETA</th><th>created</th></tr></thead>
      <tbody>${jobs.map(
        (j) => html`<tr>
        <td><a href=${`#/jobs/${j.id}`}>${j.id.slice(0, 8)}</a></td><td><span class=${`state ${j.state}`}>${j.state}</span></td>
        <td><${Progress} job=${j} /></td><td>${j.pairs}</td><td>${j.rate ? `${num(j.rate, 0)}/s` : '—'}</td>
        <td>${FINISHED.includes(j.state) ? '—' : duration(j.etaSeconds)}</td><td>${new Date(j.createdAt).toLocaleString()}</td></tr>`,
      )}</tbody>
    </table>`
    }
  </div>`;
}

/** A job's pair as the pair view's row. */
function toPair(job, r) {
  return {
    s1: r.a.text,
    s2: r.b.text,
    s1_id: r.a.id,
    s2_id: r.b.id,
    meta1: r.a.meta,
    meta2: r.b.meta,
    label: r.label,
    probabilities: r.probabilities,
    labeledBy: r.labeledBy,
    cosine: r.cosine,
    margin: r.margin,
    lexical: r.lexical,
    diff: r.diff,
    source: { kind: 'job', job: job.id, seq: r.seq },
  };
}

/** The annotations' precision and recall at the model's cut (GET /v1/annotations/report), polled. */
function Estimate({ cut }) {
  const [report, setReport] = useState(null);
  useEffect(() => {
    let live = true;
    const load = () =>
      api('/v1/annotations/report')
        .then((r) => live && setReport(r))
        .catch(() => {});
    load();
    const timer = setInterval(load, 5000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);
  const rows = report?.model ?? [];
  if (cut === undefined || rows.length === 0)
    return html`<p class="muted estimate">No annotated pairs with the model's probabilities yet: the estimate appears as you label.</p>`;
  const at = rows.reduce((a, b) => (Math.abs(b.threshold - cut) < Math.abs(a.threshold - cut) ? b : a));
  const pct = (x) => `${(100 * x).toFixed(1)}%`;
  return html`<p class="estimate">At the cut ${at.threshold}: precision <b>${pct(at.precision)}</b>, recall${' '}<b>${pct(at.recall)}</b> on ${report.withProbability} annotated pairs of this index (updates as you label).</p>`;
}

function Clusters({ job }) {
  const [clusters, setClusters] = useState(null);
  const [texts, setTexts] = useState({});
  const [error, setError] = useState('');
  useEffect(() => {
    (async () => {
      const cs = await ndjson(`/v1/jobs/${job.id}/clusters?limit=20`);
      setClusters(cs);
      const ids = [...new Set(cs.flatMap((c) => c.ids))].slice(0, 200);
      const got = await Promise.all(ids.map((id) => api(`/v1/sentences/${id}`).catch(() => null)));
      setTexts(Object.fromEntries(got.filter(Boolean).map((s) => [s.id, s.text])));
    })().catch((e) => setError(explain(e)));
  }, [job.id, job.state]);
  if (error) return html`<${Alert} error=${error} />`;
  if (!clusters) return html`<p class="muted">Loading clusters…</p>`;
  if (clusters.length === 0)
    return html`<p class="muted">No clusters${FINISHED.includes(job.state) ? '' : ' yet (written when the job finishes)'}.</p>`;
  return html`<ol class="clusters">${clusters.map((c) => html`<li><ul>${c.ids.map((id) => html`<li><span class="muted">#${id}</span> ${texts[id] ?? ''}</li>`)}</ul></li>`)}</ol>`;
}

export function JobView({ id, config, auth }) {
  const [job, setJob] = useState(null);
  const [page, setPage] = useState(0);
  const [pairs, setPairs] = useState([]);
  const [tab, setTab] = useState('pairs');
  const [error, setError] = useState('');

  useEffect(() => {
    const ctl = new AbortController();
    events(`/v1/jobs/${id}/events`, (name, data) => name === 'progress' && setJob(data), ctl.signal).catch(
      (e) => e.name !== 'AbortError' && setError(explain(e)),
    );
    return () => ctl.abort();
  }, [id]);

  const [cut, setCut] = useState(undefined);
  // Pages fill while the job runs: reload the page on view when its pair count changes.
  const filled = job ? Math.min(PAGE, Math.max(0, job.pairs - page * PAGE)) : 0;
  useEffect(() => {
    if (!job || tab === 'clusters') return;
    const load =
      tab === 'review'
        ? api(`/v1/jobs/${id}/review?offset=${page * PAGE}&limit=${PAGE}`).then((r) => {
            setCut(r.student === undefined ? undefined : r.cuts[r.student]);
            return r.pairs;
          })
        : ndjson(`/v1/jobs/${id}/results?offset=${page * PAGE}&limit=${PAGE}&diff=true`);
    load.then((rs) => setPairs(rs.map((r) => toPair(job, r)))).catch((e) => setError(explain(e)));
  }, [id, page, filled, tab]);

  if (!job) return html`<div class="view"><${Alert} error=${error} /><p class="muted">Loading job…</p></div>`;
  const pages = Math.max(1, Math.ceil(job.pairs / PAGE));
  const cancel = () =>
    api(`/v1/jobs/${id}`, { method: 'DELETE' })
      .then(setJob)
      .catch((e) => setError(explain(e)));
  return html`<div class="view job">
    <h2>Job <code>${id.slice(0, 8)}</code> <span class=${`state ${job.state}`}>${job.state}</span></h2>
    <div class="job-progress">
      <${Progress} job=${job} />
      <span><b>${job.processed}</b> / ${job.total} sentences</span>
      <span><b class="pairs-count">${job.pairs}</b> pairs</span>
      <span>${job.rate ? `${num(job.rate, 1)} sentences/s` : '—'}</span>
      ${FINISHED.includes(job.state) ? null : html`<span>ETA ${duration(job.etaSeconds)}</span>`}
      ${FINISHED.includes(job.state) ? null : html`<button type="button" onClick=${cancel}>Cancel</button>`}
      <button type="button" onClick=${() => download(`/v1/jobs/${id}/results`, `job-${id.slice(0, 8)}.ndjson`).catch((e) => setError(explain(e)))}>Download NDJSON</button>
    </div>
    ${job.error ? html`<${Alert} error=${`${job.error.code}: ${job.error.message}`} />` : null}
    <${Alert} error=${error} onClose=${() => setError('')} />
    <details class="spec"><summary>spec</summary><pre>${JSON.stringify(job.spec, null, 2)}</pre></details>
    <div class="tabs">
      <button type="button" class=${tab === 'pairs' ? 'active' : ''} onClick=${() => {
        setTab('pairs');
        setPage(0);
      }}>Pairs</button>
      <button type="button" class=${tab === 'review' ? 'active' : ''} onClick=${() => {
        setTab('review');
        setPage(0);
      }} disabled=${!job.spec.rerank} title="the least sure labels first: the annotations that move this index's cut most">Review</button>
      <button type="button" class=${tab === 'clusters' ? 'active' : ''} onClick=${() => setTab('clusters')} disabled=${!job.spec.cluster}>Clusters${job.clusters === undefined ? '' : ` (${job.clusters})`}</button>
    </div>
    ${
      tab === 'clusters'
        ? html`<${Clusters} job=${job} />`
        : html`${tab === 'review' ? html`<${Estimate} cut=${cut} />` : null}<div class="pager">
          <button type="button" disabled=${page === 0} onClick=${() => setPage(page - 1)}>← previous</button>
          <span>page ${page + 1} of ${pages}</span>
          <button type="button" disabled=${page + 1 >= pages} onClick=${() => setPage(page + 1)}>next →</button>
        </div>
        <${PairTable} pairs=${pairs} config=${config} auth=${auth} />`
    }
  </div>`;
}

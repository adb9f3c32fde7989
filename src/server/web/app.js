// The page: loads /v1/config, keeps the API key for this tab (sessionStorage), and routes by hash:
// #/search, #/jobs, #/jobs/ID, #/annotations, #/index.
import { annotatorName } from './annotate.js';
import { ApiError, api, apiKey, explain } from './api.js';
import { AnnotationsView, IndexView } from './info.js';
import { JobsView, JobView } from './jobs.js';
import { SearchView } from './search.js';
import { Alert, html, render, useEffect, useState } from './ui.js';

const TABS = [
  ['#/search', 'Search'],
  ['#/jobs', 'Jobs'],
  ['#/annotations', 'Annotations'],
  ['#/index', 'Index'],
];

function useHash() {
  const [hash, setHash] = useState(location.hash || '#/search');
  useEffect(() => {
    const on = () => setHash(location.hash || '#/search');
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return hash;
}

/** Checks a key with GET /v1/whoami; resolves to its name (or null) and keeps it for the tab. */
async function checkKey(key) {
  const who = await api('/v1/whoami', { key });
  apiKey.set(key);
  return who;
}

function KeyForm({ who, onChange, required }) {
  const [draft, setDraft] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  async function submit(e) {
    e.preventDefault();
    if (!draft.trim()) return;
    setBusy(true);
    setError('');
    try {
      onChange(await checkKey(draft.trim()));
      setDraft('');
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? 'That API key was not accepted (401 UNAUTHORIZED). Check it, or ask whoever runs the service for one.'
          : explain(err),
      );
    } finally {
      setBusy(false);
    }
  }
  if (who && apiKey.get()) {
    const forget = () => {
      apiKey.set('');
      onChange(null);
    };
    return html`<div class="keybar"><span class="ok">${who.name ? html`Key of <b>${who.name}</b>` : 'Key accepted'}</span>
      <button type="button" class="link" onClick=${forget}>forget</button></div>`;
  }
  return html`<form class="keybar" onSubmit=${submit}>
    <label>API key <input type="password" name="apikey" autocomplete="off" value=${draft}
      onInput=${(e) => setDraft(e.currentTarget.value)} placeholder=${required ? 'required' : 'to annotate and start jobs'} /></label>
    <button type="submit" disabled=${busy}>Use</button>
    ${error ? html`<span class="key-error" role="alert">${error}</span>` : null}
  </form>`;
}

function AnnotatorField() {
  const [name, setName] = useState(annotatorName.get());
  return html`<label class="keybar">Annotator <input name="annotator" size="10" value=${name} placeholder="your name"
    onInput=${(e) => {
      setName(e.currentTarget.value);
      annotatorName.set(e.currentTarget.value.trim());
    }} /></label>`;
}

function forgetKey() {
  apiKey.set('');
  return null;
}

function App() {
  const hash = useHash();
  const [config, setConfig] = useState(null);
  const [who, setWho] = useState(null);
  const [needKey, setNeedKey] = useState(false);
  const [error, setError] = useState('');

  async function boot() {
    setError('');
    try {
      const c = await api('/v1/config');
      // A key kept from earlier in this tab may have been revoked since: forget it then.
      if (c.auth.keys && apiKey.get()) setWho(await api('/v1/whoami').catch(forgetKey));
      setConfig(c);
      setNeedKey(false);
    } catch (e) {
      if (e.status === 401) setNeedKey(true);
      else setError(explain(e));
    }
  }
  useEffect(() => void boot(), []);

  const navigate = (to) => {
    location.hash = to;
  };
  const onKey = (w) => {
    setWho(w);
    if (w && needKey) void boot();
  };
  const header = (keyed, required) => html`<header class="top">
    <a class="brand" href="#/search"><img src="/assets/icon.svg" alt="" width="22" height="22" /> paramine</a>
    <nav>${TABS.map(([href, label]) => html`<a href=${href} class=${hash.startsWith(href) ? 'active' : ''}>${label}</a>`)}</nav>
    ${keyed ? html`<${KeyForm} who=${who} required=${required} onChange=${onKey} />` : html`<${AnnotatorField} />`}
  </header>`;

  if (needKey) {
    return html`${header(true, true)}<main><div class="view">
      <p class="notice">This service needs an API key for every request. Enter it above; it is kept for this tab only.</p>
    </div></main>`;
  }
  if (!config)
    return html`${header(false)}<main><${Alert} error=${error} />${error ? null : html`<p class="muted">Loading…</p>`}</main>`;

  const keyed = config.auth.keys;
  const auth = { keyed, enabled: !keyed || Boolean(who && apiKey.get()) };
  const props = { config, auth, navigate };
  const job = /^#\/jobs\/([0-9a-f-]{36})/.exec(hash)?.[1];
  let view;
  if (job) view = html`<${JobView} id=${job} ...${props} key=${job} />`;
  else if (hash.startsWith('#/jobs')) view = html`<${JobsView} ...${props} />`;
  else if (hash.startsWith('#/annotations')) view = html`<${AnnotationsView} ...${props} />`;
  else if (hash.startsWith('#/index')) view = html`<${IndexView} ...${props} />`;
  else view = html`<${SearchView} ...${props} />`;
  return html`${header(keyed, config.auth.protectAll)}<main>${view}</main>`;
}

const root = document.getElementById('app');
root.replaceChildren();
render(html`<${App} />`, root);

// The HTTP API as the page uses it: JSON calls with the tab's Bearer key, NDJSON pages, server-sent
// events read through fetch() (EventSource cannot send the Authorization header) and downloads.

const KEY = 'paramine.apiKey';

/** The API key lives in sessionStorage: this tab only, gone when it closes. */
export const apiKey = {
  get: () => sessionStorage.getItem(KEY) ?? '',
  set: (k) => (k ? sessionStorage.setItem(KEY, k) : sessionStorage.removeItem(KEY)),
};

/** An error answer of the service ({code, message, field}) or a network failure. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code ?? (status === 0 ? 'NETWORK' : 'HTTP_ERROR');
    this.field = body?.field;
  }
}

function headers(extra = {}, key = apiKey.get()) {
  const h = { ...extra };
  if (key) h.authorization = `Bearer ${key}`;
  return h;
}

async function send(path, { method = 'GET', body, key, signal } = {}) {
  let res;
  try {
    res = await fetch(path, {
      method,
      signal,
      headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }, key),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, { message: `the service cannot be reached (${e.message})` });
  }
  if (!res.ok) {
    const text = await res.text();
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { message: text || res.statusText };
    }
    throw new ApiError(res.status, parsed);
  }
  return res;
}

/** A JSON call; rejects with ApiError. */
export async function api(path, options = {}) {
  const res = await send(path, options);
  return res.status === 204 ? null : res.json();
}

/** Every line of an NDJSON response, parsed. */
export async function ndjson(path, options = {}) {
  const res = await send(path, options);
  const text = await res.text();
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

/**
 * Reads a text/event-stream, calling onEvent(name, data) per event, until the stream ends or the
 * signal aborts.
 */
export async function events(path, onEvent, signal) {
  const res = await send(path, { signal });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) onEvent(name, JSON.parse(data.join('\n')));
    }
  }
}

/** Fetches with the key and saves the body as a file (a plain link could not send the key). */
export async function download(path, filename) {
  const res = await send(path);
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** What to tell a person about a failed call. */
export function explain(e) {
  if (e.status === 401) {
    return apiKey.get()
      ? 'The API key was not accepted (401). Check it, or ask whoever runs the service for one.'
      : 'This needs an API key: enter it at the top of the page.';
  }
  if (e.code === 'NETWORK') return e.message;
  const where = e.field ? ` (${e.field})` : '';
  return `${e.message}${where}`;
}

/**
 * The web page's weight and its time to first results, in Debian's Chromium (playwright-core, a dev
 * dependency) against `paramine serve` on loopback:
 *
 *   npm run lab -- web [--index DIR --queries 20 --rerank false --json FILE]   (npm run bench:web -- …)
 *
 * Page weight: every response of a cold load of the search page (fresh profile, empty cache), from
 * Chromium's network events (Network.loadingFinished's encodedDataLength: bytes on the wire, headers
 * included), with the decoded body sizes. Time to first results: in the page, from the search button's
 * click to the first candidate row in the DOM (request, search, rerank, diff, render), for `--queries`
 * sentences of the index, each once through the page and once as the same POST /v1/search from Node
 * (the reference: the API alone), interleaved, so the page's own cost is the difference. The first query
 * of each is reported apart (it pays the models' warm-up). Without --index: indexes/demo (`bash
 * scripts/demo` builds it).
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { z } from 'zod';
import { defineBenchmark, type Log } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { launchChromium } from '../../dist/testing/chromium.js';
import { spawnServe } from '../../dist/testing/index.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const schema = z.object({
  index: z.string().min(1),
  queries: z.coerce.number().int().min(2).max(500),
  rerank: z.enum(['true', 'false']).transform((v) => v === 'true'),
});
type Options = z.output<typeof schema>;

interface Resource {
  url: string;
  type: string;
  status: number;
  transferredBytes: number;
  bodyBytes: number;
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};
const summary = (xs: number[]) => ({
  n: xs.length,
  median: quantile(xs, 0.5),
  p90: quantile(xs, 0.9),
  mean: xs.reduce((a, b) => a + b, 0) / xs.length,
});

async function run(args: Options, log: Log) {
  if (!existsSync(join(args.index, 'manifest.json'))) {
    throw new Error(
      `no index at ${args.index}: build the demo one with \`bash scripts/demo\`, or give --index`,
    );
  }
  const loadBefore = loadavg();
  const svc = await spawnServe([CLI, 'serve', '--index', resolve(args.index), '--log-level', 'info']);
  const browser = await launchChromium();
  const { context } = browser;
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const { weight, timing } = await loadAndWeigh(context, page, svc.url);
    log(`search page: ${weight.requests} requests, ${weight.transferredKB.toFixed(1)} KB transferred`);

    const queries = await sampleQueries(svc.url, args.queries);
    if (!args.rerank) await page.locator('input[name=rerank]').uncheck();
    const pageMs: number[] = [];
    const apiMs: number[] = [];
    const serverMs: number[] = [];
    for (const q of queries) {
      pageMs.push(await timeThroughPage(page, q));
      const api = await timeThroughApi(svc.url, q, args.rerank);
      apiMs.push(api.ms);
      serverMs.push(api.serverMs);
    }
    const result = {
      machine: machineInfo(loadBefore),
      index: resolve(args.index),
      rerank: args.rerank,
      page: { ...weight, ...timing },
      firstQuery: { pageMs: pageMs[0], apiMs: apiMs[0] },
      timeToFirstResultsMs: {
        page: summary(pageMs.slice(1)),
        api: summary(apiMs.slice(1)),
        serverTotal: summary(serverMs.slice(1)),
        pageOverApiMedian: quantile(pageMs.slice(1), 0.5) / quantile(apiMs.slice(1), 0.5),
      },
    };
    return { result, markdown: markdown(result) };
  } finally {
    await browser.close();
    svc.child.kill('SIGTERM');
  }
}

/** A cold load of the search page: every response's bytes (Chromium's network events) and the timings. */
async function loadAndWeigh(context: BrowserContext, page: Page, url: string) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const seen = new Map<string, Resource>();
  cdp.on('Network.responseReceived', (e) => {
    seen.set(e.requestId, {
      url: e.response.url.replace(url, ''),
      type: e.type ?? '',
      status: e.response.status,
      transferredBytes: 0,
      bodyBytes: 0,
    });
  });
  cdp.on('Network.dataReceived', (e) => {
    const r = seen.get(e.requestId);
    if (r) r.bodyBytes += e.dataLength;
  });
  cdp.on('Network.loadingFinished', (e) => {
    const r = seen.get(e.requestId);
    if (r) r.transferredBytes = e.encodedDataLength;
  });
  await page.goto(`${url}/#/search`, { waitUntil: 'networkidle' });
  await page.locator('#query').waitFor();
  const timing = await page.evaluate<{ domContentLoadedMs: number; loadMs: number; appReadyMs: number }>(
    NAVIGATION_TIMING,
  );
  const resources = [...seen.values()];
  const weight = {
    requests: resources.length,
    transferredKB: resources.reduce((n, r) => n + r.transferredBytes, 0) / 1024,
    bodyKB: resources.reduce((n, r) => n + r.bodyBytes, 0) / 1024,
    resources,
  };
  return { weight, timing };
}

/** Sentences of the index spread over its id range (GET /v1/sentences/:id). */
async function sampleQueries(url: string, n: number): Promise<string[]> {
  const info = (await (await fetch(`${url}/v1/index`)).json()) as { sentences: number };
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = Math.floor(((i + 0.5) * info.sentences) / n);
    out.push(((await (await fetch(`${url}/v1/sentences/${id}`)).json()) as { text: string }).text);
  }
  return out;
}

/**
 * In the page (run there as a string: this program has no DOM types): click the search button, resolve
 * with the milliseconds until the first candidate row of this query is in the DOM, by the page's clock.
 * The previous query's rows stay on screen until the new ones replace them: wait for this query's group.
 */
const CLICK_TO_FIRST_ROW = `new Promise((done) => {
  const text = document.querySelector('#query').value.trim();
  const started = performance.now();
  const observer = new MutationObserver(() => {
    const group = document.querySelector('.pairtable tr.group th');
    if (group && group.textContent.trim() === text && document.querySelector('tr[data-row]')) {
      observer.disconnect();
      done(performance.now() - started);
    }
  });
  observer.observe(document.querySelector('main'), { childList: true, subtree: true, characterData: true });
  document.querySelector('button[type=submit].primary').click();
})`;

const NAVIGATION_TIMING = `(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  return { domContentLoadedMs: nav.domContentLoadedEventEnd, loadMs: nav.loadEventEnd, appReadyMs: performance.now() };
})()`;

async function timeThroughPage(page: Page, query: string): Promise<number> {
  await page.locator('#query').fill(query);
  return page.evaluate<number>(CLICK_TO_FIRST_ROW);
}

async function timeThroughApi(
  url: string,
  text: string,
  rerank: boolean,
): Promise<{ ms: number; serverMs: number }> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ texts: [text], k: 10, rerank, diff: true, filter: {} }),
  });
  const body = (await res.json()) as { timings: { totalMs: number } };
  return { ms: performance.now() - started, serverMs: body.timings.totalMs };
}

function markdown(r: {
  machine: { cpuModel: string; cpus: number };
  rerank: boolean;
  page: {
    requests: number;
    transferredKB: number;
    bodyKB: number;
    domContentLoadedMs: number;
    appReadyMs: number;
  };
  firstQuery: { pageMs: number | undefined; apiMs: number | undefined };
  timeToFirstResultsMs: Record<'page' | 'api' | 'serverTotal', { n: number; median: number; p90: number }> & {
    pageOverApiMedian: number;
  };
}): string {
  const t = r.timeToFirstResultsMs;
  const f = (x: number | undefined) => (x === undefined ? '—' : x.toFixed(0));
  return [
    `Search page: ${r.page.requests} requests, ${r.page.transferredKB.toFixed(1)} KB transferred (${r.page.bodyKB.toFixed(1)} KB of bodies); DOMContentLoaded ${f(r.page.domContentLoadedMs)} ms, app ready ${f(r.page.appReadyMs)} ms`,
    '',
    `| time to first results (rerank ${r.rerank ? 'on' : 'off'}), ms | n | median | p90 |`,
    '|---|---|---|---|',
    `| page: click → first row | ${t.page.n} | ${f(t.page.median)} | ${f(t.page.p90)} |`,
    `| API alone: POST /v1/search from Node | ${t.api.n} | ${f(t.api.median)} | ${f(t.api.p90)} |`,
    `| server's own totalMs | ${t.serverTotal.n} | ${f(t.serverTotal.median)} | ${f(t.serverTotal.p90)} |`,
    '',
    `page / API (median): ${t.pageOverApiMedian.toFixed(2)}; first query (models warming up): page ${f(r.firstQuery.pageMs)} ms, API ${f(r.firstQuery.apiMs)} ms`,
    `${r.machine.cpuModel}, ${r.machine.cpus} cores (shared machine)`,
    '',
  ].join('\n');
}

export const web = defineBenchmark({
  name: 'web',
  description: "the web page's weight and time to first results in Chromium, against the API alone",
  options: (cmd) =>
    cmd
      .option('--index <dir>', 'index to serve (bash scripts/demo builds indexes/demo)', 'indexes/demo')
      .option('--queries <n>', 'sentences of the index searched through the page and the API', '20')
      .option('--rerank <bool>', 'rerank the candidates (true or false)', 'true'),
  schema,
  outIsJson: false,
  run,
});

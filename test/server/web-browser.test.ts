/**
 * The web page in a real browser (Debian's Chromium through playwright-core) against a real
 * `paramine serve` child on loopback, over a tiny index of the demo corpus, with an API key:
 * search shows labeled candidates with the word diff; a wrong key gets a clear message; the annotation
 * loop runs from the keyboard alone and the export holds the labels; a job started from the page
 * reaches 100% and shows its pairs and clusters; the index and annotation pages render; no page logs
 * a console error. Screenshots go to test-artifacts/web/.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { readPairs } from '../../src/corpus/pairs.js';
import { buildIndex } from '../../src/indexer/build.js';
import { spawnServe } from '../../src/testing/index.js';
import { launchBrowser } from '../helpers/browser.js';
import { demoSlice } from '../helpers/corpus.js';
import { HAS_RERANKER } from '../helpers/service.js';

const KEY = 'browser-test-key-42';
const dir = mkdtempSync(join(tmpdir(), 'paramine-web-'));
const index = join(dir, 'index');
const keysFile = join(dir, 'keys.txt');
writeFileSync(keysFile, `tester:${KEY}\n`);
await buildIndex({ inputs: [demoSlice(dir, 300)], out: index, model: 'all-minilm-l6-v2', quiet: true });
const serve = await spawnServe([
  ...process.execArgv,
  'src/cli.ts',
  'serve',
  '--index',
  index,
  '--api-keys-file',
  keysFile,
  '--jobs-dir',
  join(dir, 'jobs'),
  '--annotations-dir',
  join(dir, 'annotations'),
  '--log-level',
  'info',
]);
const child: ChildProcess = serve.child;
const url = serve.url;
const browser = await launchBrowser('web');
const { page } = browser;
t.teardown(async () => {
  await browser.close();
  child.kill('SIGTERM');
  await once(child, 'exit');
  rmSync(dir, { recursive: true, force: true });
});

const QUERY = "My son, listen to your father's instruction, and don't forsake your mother's teaching.";
const TWIN = 'My son, hear the instruction of thy father, and forsake not the law of thy mother:';
const rows = page.locator('tr[data-row]');
const rowOf = (text: string) => page.locator('tr[data-row]', { hasText: text });

async function exportOf(scheme: string) {
  const res = await fetch(`${url}/v1/annotations?scheme=${scheme}`);
  const text = await res.text();
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { s1: string; s2: string; label: string; annotator?: string });
}

t.test('search shows labeled candidates with the diff', async (t) => {
  await page.goto(url);
  await page.locator('#query').fill(QUERY);
  await page.locator('#query').press('Control+Enter');
  await rows.first().waitFor();
  t.ok((await rows.count()) >= 5, `${await rows.count()} candidates`);
  const twin = rowOf(TWIN);
  t.equal(await twin.count(), 1, 'the KJV twin is among the candidates');
  t.ok(
    (await twin.locator('.side-a .d-del').count()) > 0,
    'query words missing from the candidate are marked',
  );
  t.ok((await twin.locator('.side-b .d-ins').count()) > 0, 'candidate words not in the query are marked');
  t.match(await twin.locator('.side-b').textContent(), /hear the instruction of thy father/);
  if (HAS_RERANKER) {
    t.equal(await page.locator('.prob.top').count(), await rows.count(), 'every candidate has a model label');
    t.match(await twin.locator('.prob.top .prob-label').textContent(), /paraphrase/);
    t.equal(await twin.locator('.prob').count(), 2, "every label's probability");
  }
  t.match(await page.locator('.timings').textContent(), /candidates for 1 query/);
  await browser.screenshot('search');
  t.same(browser.takeErrors(), [], 'no console errors');
});

let who: { name: string | null } = { name: null };

t.test('a wrong API key gets a clear message; the right one is accepted', async (t) => {
  await page.locator('input[name=apikey]').fill('not-the-key-000');
  await page.locator('input[name=apikey]').press('Enter');
  const error = page.locator('.key-error');
  await error.waitFor();
  t.match(await error.textContent(), /not accepted \(401 UNAUTHORIZED\)/);
  await browser.screenshot('wrong-key');
  const errors = browser.takeErrors();
  t.ok(
    errors.every((e) => /status of 401/.test(e)),
    `only the rejected request is logged (${errors.join('; ')})`,
  );
  await page.locator('input[name=apikey]').fill(KEY);
  await page.locator('input[name=apikey]').press('Enter');
  await page.locator('.keybar .ok').waitFor();
  who = (await (await fetch(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as {
    name: string | null;
  };
  t.same(browser.takeErrors(), []);
});

t.test('keyboard-only annotation loop; the export holds the labels', async (t) => {
  const status = page.locator('.status');
  await page.keyboard.press('Escape');
  await page.keyboard.press('a');
  await t.resolves(status.filter({ hasText: 'Saved “paraphrase” for pair 1' }).waitFor());
  t.equal(await page.locator('tr.focused').getAttribute('data-row'), '1', 'accept moves to the next pair');
  await page.keyboard.press('x');
  await status.filter({ hasText: 'Saved “not_paraphrase” for pair 2' }).waitFor();
  await page.keyboard.press('Backspace');
  await status.filter({ hasText: 'Undone: pair 2' }).waitFor();
  t.equal(await rows.nth(1).locator('.badge').count(), 0, 'undo removed the label of pair 2');
  t.equal(await page.locator('tr.focused').getAttribute('data-row'), '1', 'undo returns to the pair');
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('0');
  await status.filter({ hasText: 'Saved “not_paraphrase” for pair 1' }).waitFor();
  t.equal(await rows.nth(0).locator('.badge').textContent(), 'not_paraphrase', 'relabeled');

  await page.locator('.pairs-toolbar select').selectOption('turku');
  await page.keyboard.press('Escape');
  await page.keyboard.press('Space');
  await page.keyboard.press('Space');
  await page.keyboard.press('4');
  await status.filter({ hasText: 'Saved “4” for pair 3' }).waitFor();
  await page.keyboard.press('<');
  await page.keyboard.press('i');
  await status.filter({ hasText: 'Saved “4<i” for pair 3' }).waitFor();
  t.equal(await rows.nth(2).locator('.badge').textContent(), '4<i');
  await browser.screenshot('annotate');
  t.same(browser.takeErrors(), [], 'no console errors');

  const first = (await rows.nth(0).locator('.side-b').textContent()) ?? '';
  const binary = await exportOf('binary');
  t.equal(binary.length, 1, 'one binary label (pair 2 was undone)');
  t.match(binary[0], { label: 'not_paraphrase' });
  t.ok(first.includes(binary[0]?.s2 ?? '?'), 'the relabeled pair');
  t.equal(who.name, 'tester');
  t.equal(binary[0]?.annotator, 'tester', 'the API key names the annotator');
  const turku = await exportOf('turku');
  t.same(
    turku.map((a) => a.label),
    ['4<i'],
  );

  await page.goto(`${url}/#/annotations`);
  await page.locator('.total').waitFor();
  t.equal(await page.locator('.total').textContent(), '2');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.locator('.exports span', { hasText: 'binary' }).locator('button', { hasText: 'TSV' }).click(),
  ]);
  const saved = join(dir, 'export.tsv');
  await download.saveAs(saved);
  const pairs = await readPairs(saved);
  t.same(
    pairs.map((p) => p.label),
    ['not_paraphrase'],
    'the page downloads a pair file the readers take',
  );
  await browser.screenshot('annotations');
  t.same(browser.takeErrors(), [], 'no console errors');
});

t.test('a job started from the page reaches 100% and shows its pairs and clusters', async (t) => {
  await page.goto(`${url}/#/jobs`);
  // The form follows the job schema's defaults: clusters and labels are asked for, not pre-ticked.
  await page.locator('select[name="scope|"]').selectOption('range');
  await page.locator('input[name="scope|range.start"]').fill('0');
  await page.locator('input[name="scope|range.end"]').fill('120');
  await page.locator('input[name=k]').fill('5');
  await page.locator('input[name=minCosine]').fill('0.7');
  await page.locator('input[name=cluster]').check();
  if (HAS_RERANKER) await page.locator('input[name="rerank?"]').check();
  await page.locator('button', { hasText: 'Start job' }).click();
  await page.waitForURL(/#\/jobs\/[0-9a-f-]{36}$/);
  await page.locator('.state.done').waitFor({ timeout: 120_000 });
  t.equal(await page.locator('.job-progress .pct').textContent(), '100%');
  const pairs = Number(await page.locator('.pairs-count').textContent());
  t.ok(pairs > 0, `${pairs} pairs`);
  await rows.first().waitFor();
  t.equal(await rows.count(), Math.min(pairs, 50), 'the first page of pairs');
  t.ok((await page.locator('.d-ins, .d-del, .d-move').count()) > 0, 'with their diffs');
  await browser.screenshot('job', { fullPage: false });
  await page.locator('.tabs button', { hasText: 'Clusters' }).click();
  await page.locator('.clusters > li').first().waitFor();
  t.ok((await page.locator('.clusters > li').count()) > 0, 'clusters');
  await browser.screenshot('clusters', { fullPage: false });
  // The review: the least sure labels first, and the estimate from the annotations so far.
  await page.locator('.tabs button', { hasText: 'Review' }).click();
  await page.locator('.estimate').waitFor();
  await rows.first().waitFor();
  t.ok((await rows.count()) > 0, 'the review lists pairs');
  await browser.screenshot('review', { fullPage: false });
  await page.goto(`${url}/#/jobs`);
  await page.locator('.jobs-table tbody tr').first().waitFor();
  await browser.screenshot('jobs');
  t.same(browser.takeErrors(), [], 'no console errors');
});

t.test('the index page', async (t) => {
  await page.goto(`${url}/#/index`);
  await page.locator('.sentences').waitFor();
  t.match(await page.locator('.sentences').textContent(), /^\d+$/);
  await page.locator('.metrics').waitFor();
  t.match(await page.locator('.metrics').textContent(), /candidates returned/);
  t.match(await page.locator('.operating-points').textContent(), /Exact search \(Flat\)/);
  await browser.screenshot('index');
  t.same(browser.takeErrors(), [], 'no console errors');
});

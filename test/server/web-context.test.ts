/**
 * A candidate's document context on the web page (Chromium against a real `paramine serve`): over an index
 * built from documents, `c` (or ¶) shows the sentences around both sides of the focused pair, and
 * "in context" saves Turku's 3 ("a paraphrase in this context only") with the context the annotator saw.
 * Without a document behind a pair, the page says so.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildIndex } from '../../src/indexer/build.js';
import { spawnServe } from '../../src/testing/index.js';
import { launchBrowser } from '../helpers/browser.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-web-ctx-'));
const corpus = join(dir, 'news.txt');
writeFileSync(
  corpus,
  'The storm closed the harbour for three days. Fishing boats stayed tied to the pier. The mayor promised help.\n\n' +
    'Schools reopened on Monday after the holiday. Teachers said the pupils were glad to be back.\n',
);
const index = join(dir, 'index');
await buildIndex(
  { inputs: [corpus], out: index, model: 'test/fixtures/tiny-encoder', documents: true, quiet: true },
  () => {},
);
const serve = await spawnServe([
  ...process.execArgv,
  'src/cli.ts',
  'serve',
  '--index',
  index,
  '--model',
  'test/fixtures/tiny-encoder',
  '--no-reranker',
  '--annotations-dir',
  join(dir, 'annotations'),
  '--jobs-dir',
  join(dir, 'jobs'),
]);
const browser = await launchBrowser('web-context');
const { page } = browser;
t.teardown(async () => {
  await browser.close();
  serve.child.kill('SIGTERM');
  await once(serve.child, 'exit');
  rmSync(dir, { recursive: true, force: true });
});

t.test('context on demand, and a label "in this context only" that keeps it', async (t) => {
  await page.goto(serve.url);
  await page.locator('#query').fill('The boats stayed at the pier.');
  await page.locator('#query').press('Control+Enter');
  const row = page
    .locator('tr[data-row]')
    .filter({ has: page.locator('.side-b', { hasText: 'Fishing boats stayed tied to the pier.' }) });
  await row.waitFor();
  await row.click();
  await page.keyboard.press('c');
  const ctx = row.locator('.ctx');
  await ctx.waitFor();
  t.match(await ctx.textContent(), /The storm closed the harbour for three days\./, 'the sentence before');
  t.match(await ctx.textContent(), /The mayor promised help\./, 'the sentence after');
  await browser.screenshot('context');
  await row.locator('button.in-context').click();
  await page.locator('.status', { hasText: 'Saved “3”' }).waitFor();
  const saved = (await (await fetch(`${serve.url}/v1/annotations?scheme=turku`)).text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  t.equal(saved.length, 1);
  t.equal(saved[0].label, '3', "Turku's 3: a paraphrase in this context only");
  t.same(
    saved[0].context?.s2,
    { before: ['The storm closed the harbour for three days.'], after: ['The mayor promised help.'] },
    'the record keeps the context the annotator saw',
  );
  await page.keyboard.press('c');
  await page.locator('.status', { hasText: 'Context hidden.' }).waitFor();
  t.equal(await row.locator('.ctx').count(), 0, 'c again hides it');
  t.same(browser.takeErrors(), [], 'no console errors');
});

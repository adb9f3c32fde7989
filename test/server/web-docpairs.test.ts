/**
 * The document workflow from the page, in a real browser (Debian's Chromium) against a real `paramine
 * serve` child: the job form (derived from the job schema) switches on `docPairs` and its alignment, sets
 * the band and the partners, and starts the job; the job aligns the documents as its first stage and its
 * pairs come only from aligned documents. Screenshots go to test-artifacts/web-docpairs/.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildIndex } from '../../src/indexer/build.js';
import { spawnServe } from '../../src/testing/index.js';
import { launchBrowser } from '../helpers/browser.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-web-docs-'));
// Three stories told twice (news:1~news:2, news:3~news:4, news:5~news:6: documents are named FILE:N), paragraphs as documents.
const docs = [
  'The storm closed the harbour for three days. Fishing boats stayed tied to the pier.',
  'A storm kept the harbour shut for three days. The fishing boats stayed at the pier.',
  'The orchestra played a new symphony on Friday night. The audience stood and applauded.',
  'On Friday night the orchestra premiered a symphony. The audience gave it a standing ovation.',
  'Engineers reopened the old bridge after a year of repairs. Traffic returned on Monday.',
  'After a year of repairs the old bridge is open again. Cars crossed it on Monday.',
];
const corpus = join(dir, 'news.txt');
writeFileSync(corpus, docs.join('\n\n'));
const index = join(dir, 'index');
await buildIndex({ inputs: [corpus], out: index, model: 'all-minilm-l6-v2', documents: true, quiet: true });
const serve = await spawnServe([
  ...process.execArgv,
  'src/cli.ts',
  'serve',
  '--index',
  index,
  '--no-reranker',
  '--jobs-dir',
  join(dir, 'jobs'),
]);
const browser = await launchBrowser('web-docpairs');
const { page } = browser;
t.teardown(async () => {
  await browser.close();
  serve.child.kill('SIGTERM');
  await once(serve.child, 'exit');
  rmSync(dir, { recursive: true, force: true });
});

t.test('a document-pair job started from the page mines within the aligned documents', async (t) => {
  await page.goto(`${serve.url}/#/jobs`);
  await page.locator('summary', { hasText: 'Pairs between' }).click();
  await page.locator('input[name="docPairs?"]').check();
  await page.locator('input[name="docPairs.align?"]').check();
  await page.locator('input[name="docPairs.align.min"]').fill('0.2');
  await page.locator('input[name="docPairs.align.partners"]').fill('1');
  await page.locator('input[name="minCosine"]').fill('0.3');
  await browser.screenshot('form');
  await page.locator('button', { hasText: 'Start job' }).click();
  await page.waitForURL(/#\/jobs\/[0-9a-f-]{36}$/);
  await page.locator('.state.done').waitFor({ timeout: 120_000 });
  const id = (page.url().split('/').pop() as string).trim();
  const job = (await (await fetch(`${serve.url}/v1/jobs/${id}`)).json()) as { spec: Record<string, unknown> };
  t.match(job.spec.docPairs, { docKey: 'doc', align: { min: 0.2, partners: 1 } }, 'the spec the form sent');
  const text = await (await fetch(`${serve.url}/v1/jobs/${id}/results`)).text();
  const pairs = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { a: { meta?: { doc?: string } }; b: { meta?: { doc?: string } } });
  t.ok(pairs.length >= 3, `${pairs.length} pairs`);
  const twins = new Set(['news:1~news:2', 'news:3~news:4', 'news:5~news:6']);
  const outside = pairs
    .map((p) => [p.a.meta?.doc, p.b.meta?.doc].sort().join('~'))
    .filter((k) => !twins.has(k));
  t.same(outside, [], 'every pair joins a document with its aligned twin');
  await page.locator('tr[data-row]').first().waitFor();
  await browser.screenshot('job');
  t.same(browser.takeErrors(), [], 'no console errors');
});

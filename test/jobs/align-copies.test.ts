/**
 * Near copies first (issue #53): a story syndicated 30 times (each copy marked in every sentence, so none
 * is de-duplicated away) and one real retelling of it. With one partner a document, the story's 9 nearest
 * are all copies, so before copies were collapsed it never met its retelling; now the copies (at or above
 * --max) collapse into the story's group, the story pairs with its retelling, and the output names the
 * copies, from `paramine docs align` as from the library.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildIndex } from '../../src/indexer/build.js';
import { alignIndexDir } from '../../src/jobs/align-index.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-align-copies-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const story = [
  'A powerful storm closed the harbour for three days and knocked out power to thousands of homes.',
  'Fishing boats stayed tied to the pier while crews cleared fallen trees from the coastal road.',
  'Officials said the ferry service would resume on Thursday if the wind dropped as forecast.',
];
const retelling = [
  'The harbour was shut for three days after a strong storm cut electricity to thousands of houses.',
  'Crews removed trees from the coast road as the fishing fleet remained moored at the pier.',
  'Ferries should run again on Thursday if the wind eases, according to officials.',
];
const others = [
  'The orchestra played a new symphony on Friday night. The audience stood and applauded for minutes.',
  'Engineers reopened the old bridge after a year of repairs. Traffic returned to the river crossing on Monday.',
  'The city council approved a budget for new bicycle lanes. Work on the first lane begins in spring.',
];
const copies = Array.from({ length: 30 }, (_, c) => story.map((s) => `${s} (wire ${c + 1})`).join(' '));
const corpus = join(dir, 'news.txt');
writeFileSync(corpus, [story.join(' '), ...copies, retelling.join(' '), ...others].join('\n\n'));
const index = join(dir, 'index');
await buildIndex({
  inputs: [corpus],
  out: index,
  model: 'test/fixtures/tiny-encoder',
  documents: true,
  quiet: true,
});
const STORY = 'news:1';
const RETELLING = 'news:32';
const options = { partners: 1, min: 0.1, max: 0.65 };

t.test('copies collapse into the story, which then meets its retelling', async (t) => {
  const { pairs, copies: groups } = await alignIndexDir(index, options);
  const keys = pairs.map((p) => [p.a, p.b].sort().join('~'));
  t.ok(keys.includes(`${STORY}~${RETELLING}`), `the story pairs with its retelling (${keys.join(', ')})`);
  t.equal(groups.length, 1, 'one group of near copies');
  t.equal(groups[0]?.doc, STORY, 'the story stands for it');
  t.equal(groups[0]?.copies.length, 30, 'with its 30 copies');
  t.notOk(
    keys.some((k) => /news:(?:[2-9]|[12]\d|3[01])~|~news:(?:[2-9]|[12]\d|3[01])$/.test(k)),
    'no copy in a pair',
  );
});

t.test('docs align writes the copies beside the pairs', async (t) => {
  const out = join(dir, 'pairs.jsonl');
  const args = [
    'docs',
    'align',
    '--index',
    index,
    '--out',
    out,
    '--partners',
    '1',
    '--min',
    '0.1',
    '--max',
    '0.65',
  ];
  const stderr = execFileSync(process.execPath, ['dist/cli.js', ...args], {
    encoding: 'utf8',
    stdio: 'pipe',
  });
  t.match(stderr, '');
  const written = readFileSync(join(dir, 'pairs.copies.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.match(written, [{ doc: STORY, copies: Array.from({ length: 30 }, () => String) }]);
});

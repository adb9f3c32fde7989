/**
 * The real development data in ../shared/data parses with the expected counts and label schemes. Runs in
 * CI (which has that folder); elsewhere skipped with the reason when it is absent (helpers/shared-data.ts).
 */
import t from 'tap';
import { readPairs } from '../../src/corpus/index.js';
import { detectScheme } from '../../src/text/labels.js';
import { sharedData } from '../helpers/shared-data.js';

const { path: DATA, skip } = sharedData();

const count = (labels: Array<string | undefined>) => {
  const out: Record<string, number> = {};
  for (const l of labels) out[String(l)] = (out[String(l)] ?? 0) + 1;
  return out;
};

t.test('real pair files in ../shared/data', { skip }, async (t) => {
  t.test('MRPC train.tsv', async (t) => {
    const pairs = await readPairs(`${DATA}mrpc/train.tsv`);
    // The published MRPC train split has 4,076 pairs (2,753 paraphrases). This copy has 4 more rows appended
    // at lines 4078-4081 (IDs -1, toy sentences such as "I like green apples."): 4,080 rows in all.
    t.equal(pairs.length, 4080);
    const published = pairs.slice(0, 4076);
    t.same(count(published.map((p) => p.label)), { '0': 1323, '1': 2753 });
    t.match(pairs[0], { s1: /^Amrozi accused his brother, whom he called "the witness"/, label: '1' });
    t.equal(pairs[0]?.where, `${DATA}mrpc/train.tsv:2`);
    t.same(
      pairs.slice(4076).map((p) => [p.s1, p.where.slice(-5)]),
      [
        ['I like green apples.', ':4078'],
        ['I love the sweet sounds of a violin.', ':4079'],
        ['I go running in the park daily.', ':4080'],
        ['I very much enjoy hearing birds sing.', ':4081'],
      ],
    );
    t.equal(detectScheme(pairs.map((p) => p.label)).name, 'binary');
  });

  t.test('MultiPIT expert train.csv', async (t) => {
    const pairs = await readPairs(`${DATA}multipit/expert/train.csv`);
    t.equal(pairs.length, 4458);
    t.same(count(pairs.map((p) => p.label)), { '0': 1999, '1': 2459 });
    t.equal(detectScheme(pairs.map((p) => p.label)).name, 'binary');
  });

  t.test('MultiPIT auto val.csv (no labels)', async (t) => {
    const pairs = await readPairs(`${DATA}multipit/auto/val.csv`);
    t.equal(pairs.length, 215);
    t.equal(detectScheme(pairs.map((p) => p.label)).name, 'positive-only');
  });

  t.test('Turku opus-pb-dev.json', async (t) => {
    const pairs = await readPairs(`${DATA}turku/opus-pb-dev.json`);
    t.equal(pairs.length, 4894);
    const labels = count(pairs.map((p) => p.label));
    t.match(labels, { '1': 1616, '2': 1602, '3': 667, '4': 293, '4<': 246, '4>': 328, '4>i': 25, '4is': 3 });
    const scheme = detectScheme(pairs.map((p) => p.label));
    t.equal(scheme.name, 'turku');
    t.same(count(pairs.map((p) => scheme.retrievalGroup(p.label))), {
      '1': 1616,
      '2': 1602,
      '3': 667,
      '4': 293 + 23 + 58 + 3, // 4, 4s, 4i, 4is
      '4< or 4>': 246 + 10 + 15 + 328 + 8 + 25, // 4<, 4<s, 4<i, 4>, 4>s, 4>i
    });
    // Each object starts 7 lines after the previous one in this pretty-printed file.
    t.equal(pairs[4893]?.where, `${DATA}turku/opus-pb-dev.json:${2 + 7 * 4893}`);
  });

  t.test('ParaSCI ACL and arXiv val .src/.tgt', async (t) => {
    const acl = await readPairs(`${DATA}parasci/acl/val.src`);
    t.equal(acl.length, 2753);
    t.equal(detectScheme(acl.map((p) => p.label)).name, 'positive-only');
    t.equal((await readPairs(`${DATA}parasci/arxiv/val.src`)).length, 3680);
  });
});

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { retrievalSvg } from '../../src/bench/figure.js';
import { classificationMetrics, type RankedQuery, retrievalMetrics } from '../../src/bench/metrics.js';
import { classificationMarkdown, markdownTable, retrievalMarkdown } from '../../src/bench/report.js';
import { detectScheme } from '../../src/text/labels.js';

const q = (group: string, ...ranks: Array<number | undefined>): RankedQuery[] =>
  ranks.map((rank) => ({ rank, group }));
// Groups arrive in JSON key order ("3" before "4"); the report puts them in the paper's order.
const ann = retrievalMetrics(
  [...q('3', 1, undefined), ...q('4', 1, 1, 5, 50), ...q('4< or 4>', 20, undefined)],
  [1, 10, 100],
);
const exact = retrievalMetrics(
  [...q('3', 1, 80), ...q('4', 1, 1, 5, 50), ...q('4< or 4>', 8, undefined)],
  [1, 10, 100],
);

t.test('markdownTable pads and aligns columns', async (t) => {
  t.equal(
    markdownTable(
      ['a', 'num'],
      [
        ['xy', '1'],
        ['z', '123'],
      ],
      'lr',
    ),
    ['| a   | num |', '|-----|----:|', '| xy  |   1 |', '| z   | 123 |'].join('\n'),
  );
});

t.test('retrievalMarkdown: all first, then groups in the paper order; percentages and MRR', async (t) => {
  const md = retrievalMarkdown(ann);
  // all: ranks 1, –, 1, 1, 5, 50, 20, – -> top-1 3/8, top-10 4/8, top-100 6/8, not found 2/8;
  // MRR = (1 + 1 + 1 + 1/5 + 1/50 + 1/20) / 8 = 3.27 / 8 = 0.40875.
  // 4: ranks 1, 1, 5, 50 -> 2/4, 3/4, 4/4; MRR (1 + 1 + 0.2 + 0.02) / 4 = 0.555.
  t.equal(
    md,
    [
      '| label    |   n | top-1 | top-10 | top-100 | not found |   MRR |',
      '|----------|----:|------:|-------:|--------:|----------:|------:|',
      '| all      |   8 | 37.5% |  50.0% |   75.0% |     25.0% | 0.409 |',
      '| 4        |   4 | 50.0% |  75.0% |  100.0% |      0.0% | 0.555 |',
      '| 4< or 4> |   2 |  0.0% |   0.0% |   50.0% |     50.0% | 0.025 |',
      '| 3        |   2 | 50.0% |  50.0% |   50.0% |     50.0% | 0.500 |',
      '',
    ].join('\n'),
  );
});

t.test('retrievalMarkdown with variants: a search column, – for a depth a variant lacks', async (t) => {
  const rerank = retrievalMetrics([...q('4', 1, 1, 1, 2), ...q('3', 1, 3), ...q('4< or 4>', 1, 2)], [1, 10]);
  const md = retrievalMarkdown(
    [
      { name: 'ANN', result: ann },
      { name: 'exact', result: exact },
      { name: 'ANN + rerank', result: rerank },
    ],
    { title: 'Turku dev' },
  );
  t.ok(md.startsWith('### Turku dev\n\n| label    |   n | search       | top-1 |'), md);
  const rows = md.split('\n').filter((l) => l.startsWith('| 4 '));
  t.same(
    rows.map((r) => r.split('|')[3]?.trim()),
    ['ANN', 'exact', 'ANN + rerank'],
  );
  t.match(rows[2], /\| +– \| +0\.0% \|/, 'rerank has no top-100: a dash');
});

t.test('classificationMarkdown: per label, weighted avg, accuracy, binary; Turku extras', async (t) => {
  const gold = ['1', '0', '1', '1'];
  const md = classificationMarkdown(classificationMetrics(gold, ['1', '1', '0', '1'], detectScheme(gold)));
  t.equal(
    md,
    [
      '| label        | precision % | recall % | F1 % | support |',
      '|--------------|------------:|---------:|-----:|--------:|',
      '| 0            |         0.0 |      0.0 |  0.0 |       1 |',
      '| 1            |        66.7 |     66.7 | 66.7 |       3 |',
      '| weighted avg |        50.0 |     50.0 | 50.0 |       4 |',
      '',
      'accuracy 50.0% (n = 4) · paraphrase (binary) precision 66.7%, recall 66.7%, F1 66.7%',
      '',
    ].join('\n'),
  );
  const tg = ['4<', '4>i', '4', '3'];
  const tmd = classificationMarkdown(classificationMetrics(tg, ['4', '4>', '4', '2'], detectScheme(tg)));
  t.match(tmd, /Base labels \(subsumption and flags merged into the base label\)/);
  t.match(tmd, /\| 4 +\| +100\.0 \| +100\.0 \| +100\.0 \| +3 \|/);
  t.match(tmd, /\| i \(minor deviation\) +\| +0\.0 \| +0\.0 \| +0\.0 \| +1 \|/);
});

/** The `<rect class="bar">` elements with their title text and height. */
function bars(svg: string) {
  return [...svg.matchAll(/<rect class="bar"[^>]* height="([\d.]+)"[^>]*><title>([^<]*)<\/title>/g)].map(
    (m) => ({
      height: Number(m[1]),
      title: m[2] ?? '',
    }),
  );
}

t.test('retrievalSvg: one bar per group and depth, heights proportional, text escaped', async (t) => {
  const svg = retrievalSvg(ann, { title: 'Turku <dev> & co' });
  t.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  t.ok(svg.trimEnd().endsWith('</svg>'));
  const bs = bars(svg);
  t.equal(bs.length, 4 * 3, 'groups all, 4, 4< or 4>, 3 × depths 1, 10, 100');
  // Plot height 300 px = 100 %.
  t.same(
    bs.slice(0, 3).map((b) => b.height),
    [112.5, 150, 225],
    'all: 37.5 %, 50 %, 75 %',
  );
  t.equal(bs[3]?.title, '4, top-1: 50.0%');
  t.equal(bs[6]?.title, '4&lt; or 4&gt;, top-1: 0.0%');
  t.match(svg, />4&lt; or 4&gt;<\/text>/);
  t.notMatch(svg, /4< or/, 'no raw < in the document');
  t.match(svg, /<title>Turku &lt;dev&gt; &amp; co<\/title>/);
  t.match(svg, />38%<\/text>/, 'percentage on the bar');
  t.match(svg, />top-100<\/text>/, 'legend');
  t.match(svg, />gold label of the pair<\/text>/, 'x axis title');
  t.notMatch(svg, /class="exact"/);
});

t.test('retrievalSvg with exact search: dashed outlines at the exact values', async (t) => {
  const svg = retrievalSvg(ann, { exact });
  const outlines = [...svg.matchAll(/<rect class="exact"[^>]* height="([\d.]+)"/g)].map((m) => Number(m[1]));
  t.equal(outlines.length, 12);
  // Group 4< or 4> top-10: ANN 0 %, exact 50 % -> outline 150 px high.
  t.equal(outlines[7], 150);
  t.match(svg, /exact search \(value in grey\)/);
  t.match(svg, /<title>4&lt; or 4&gt;, top-10: 0\.0% \(exact 50\.0%\)<\/title>/);
});

// scripts/setup installs rsvg-convert; where it is missing, CI fails and elsewhere the check says it skipped.
const rsvg = spawnSync('rsvg-convert', ['--version']);
const noRsvg =
  rsvg.error || rsvg.status !== 0
    ? 'rsvg-convert not installed (apt-get install librsvg2-bin): SVG rendering not checked'
    : false;
if (noRsvg && process.env.CI) throw new Error(`CI is set and ${noRsvg}`);

t.test('retrievalSvg renders (rsvg-convert)', { skip: noRsvg }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'paramine-svg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const svgPath = join(dir, 'fig.svg');
  writeFileSync(svgPath, retrievalSvg(ann, { exact }));
  const png = join(dir, 'fig.png');
  const r = spawnSync('rsvg-convert', ['-o', png, svgPath], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.ok(statSync(png).size > 5000, 'a non-trivial PNG');
});

/**
 * The band of `docs align` from the data (src/jobs/align-band.ts): the gap between the documents that have a
 * partner and those that have none, a mode of near copies, and the defaults where the scores show no gap.
 */
import t from 'tap';
import { alignBand, bandText, DEFAULT_BAND, histogram, split } from '../../src/jobs/align-band.js';

/** Seeded normal scores (Park–Miller, Box–Muller): a mode of `n` documents' nearest-partner scores. */
function modes(seed: number) {
  let s = seed;
  const uniform = () => {
    s = (s * 16807) % 2147483647;
    return s / 2147483647;
  };
  return (n: number, mean: number, sd: number) =>
    Array.from({ length: n }, () =>
      Math.min(1, mean + sd * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform())),
    );
}

t.test('two modes: --min in the gap between the unpaired documents and the paired ones', async (t) => {
  const mode = modes(7);
  // as in a small news set: documents without a partner near 0.27, with one near 0.62
  const lonely = mode(25, 0.27, 0.04);
  const paired = mode(15, 0.62, 0.07);
  const band = alignBand([...lonely, ...paired], {}, true);
  t.equal(band.from.min, 'data');
  // the edge goes in the widest empty space between them: every paired document above it, at most the one
  // lonely outlier (4 sigma out, nearer the paired than its own) with them
  t.ok(
    paired.every((x) => x >= band.min),
    `every paired document at or above --min ${band.min}`,
  );
  t.ok(lonely.filter((x) => x >= band.min).length <= 1, 'at most one unpaired document above it');
  t.same([band.max, band.from.max], [DEFAULT_BAND.max, 'default'], 'no near copies: the default upper edge');
  t.equal((band.proposed.min?.below ?? 0) + (band.proposed.min?.above ?? 0), 40);
  t.equal(band.documents, 40);
  // a planted set's size: 300 documents with a partner among 300 without
  const big = alignBand([...mode(300, 0.22, 0.05), ...mode(300, 0.55, 0.09)], {}, true);
  t.ok(big.min > 0.3 && big.min < 0.45, `--min ${big.min} in the valley`);
});

t.test('one mode: the defaults stay, and the report says the data proposes none', async (t) => {
  const mode = modes(3);
  for (const n of [40, 600]) {
    const band = alignBand(mode(n, 0.4, 0.1), {}, true);
    t.same([band.min, band.max], [DEFAULT_BAND.min, DEFAULT_BAND.max], `${n} documents`);
    t.same(band.from, { min: 'default', max: 'default' });
    t.equal(band.proposed.min, undefined);
  }
  t.match(bandText(alignBand(mode(40, 0.4, 0.1), {})), /--min 0\.1 \(default\); the data proposes none/);
  t.equal(split([0.3, 0.31, 0.9]), undefined, 'too few documents for two modes');
});

t.test('near copies: a third mode sets --max below it', async (t) => {
  const mode = modes(11);
  const band = alignBand(
    [...mode(200, 0.22, 0.05), ...mode(120, 0.55, 0.08), ...mode(40, 0.985, 0.008)],
    {},
    true,
  );
  t.ok(band.min > 0.3 && band.min < 0.45, `--min ${band.min} between the unpaired and the partners`);
  t.ok(band.max > 0.75 && band.max < 0.96, `--max ${band.max} between the partners and the copies`);
  t.same(band.from, { min: 'data', max: 'data' });
  // partners and copies only: the gap is the copies'; the lower edge stays the default
  const two = alignBand([...mode(60, 0.6, 0.07), ...mode(20, 0.985, 0.008)], {}, true);
  t.equal(two.min, DEFAULT_BAND.min);
  t.ok(two.max > 0.75 && two.max < 0.96, `--max ${two.max}`);
});

t.test('given edges win; the proposal is still reported', async (t) => {
  const mode = modes(5);
  const band = alignBand([...mode(300, 0.22, 0.05), ...mode(300, 0.55, 0.09)], { min: 0.3, max: 0.9 }, true);
  t.same([band.min, band.max], [0.3, 0.9]);
  t.same(band.from, { min: 'given', max: 'given' });
  t.ok(band.proposed.min !== undefined);
});

t.test('the histogram: 0.05 bins from the lowest score to the highest, every score once', async (t) => {
  const bins = histogram([0.12, 0.14, 0.41, 0.44, 0.45, 1]);
  t.equal(bins[0]?.lo, 0.1);
  t.equal(bins.at(-1)?.hi, 1.05);
  t.same(
    bins.filter((b) => b.n > 0).map((b) => [b.lo, b.n]),
    [
      [0.1, 2],
      [0.4, 2],
      [0.45, 1],
      [1, 1],
    ],
  );
  const mode = modes(7);
  const band = alignBand([...mode(300, 0.22, 0.05), ...mode(300, 0.55, 0.09)], {}, true);
  t.match(bandText(band), new RegExp(`<- --min ${band.min}`), 'the edge is marked on its bin');
  t.match(bandText(band), /--min [\d.]+ \(data\); the data proposes [\d.]+ \(between \d+ and \d+ documents/);
});

t.test('without --auto-band the defaults stay and the proposal is only reported', async (t) => {
  const mode = modes(7);
  const band = alignBand([...mode(300, 0.22, 0.05), ...mode(300, 0.55, 0.09)], {});
  t.same([band.min, band.max], [DEFAULT_BAND.min, DEFAULT_BAND.max]);
  t.same(band.from, { min: 'default', max: 'default' });
  t.ok((band.proposed.min?.at ?? 0) > 0.3, 'the proposal is there');
  t.match(bandText(band), /--min 0\.1 \(default\); the data proposes 0\.\d+ \(between/);
});

/**
 * Seeded nearest and second-nearest chance scores: each document's two best similarities among many others,
 * at a level of its own (documents on a crowded topic score high with everything), the two highest points
 * of an exponential tail above it (Gumbel's domain: -log of the first two arrivals of a Poisson process).
 * `partner`: the document also has one, scoring from that normal, which its chance best then follows.
 */
function documents(seed: number) {
  let s = seed;
  const uniform = () => {
    s = (s * 16807) % 2147483647;
    return s / 2147483647;
  };
  const normal = (mean: number, sd: number) =>
    mean + sd * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  return (
    n: number,
    level: { mean: number; sd: number; beta: number },
    partner?: { mean: number; sd: number },
  ) => {
    const [first, second]: [number[], number[]] = [[], []];
    for (let d = 0; d < n; d++) {
      const mu = normal(level.mean, level.sd);
      const e1 = -Math.log(uniform());
      const e2 = e1 - Math.log(uniform());
      const [c1, c2] = [mu - level.beta * Math.log(e1), mu - level.beta * Math.log(e2)];
      const p = partner && Math.min(1, normal(partner.mean, partner.sd));
      if (p !== undefined && p > c1) [first[d], second[d]] = [p, c1];
      else [first[d], second[d]] = [c1, p !== undefined ? Math.max(p, c2) : c2];
    }
    return { first, second };
  };
}

/** Share of the documents at or above `at` that are `paired`'s, and of those that are. */
function quality(lonely: number[], paired: number[], at: number) {
  const right = paired.filter((x) => x >= at).length;
  const kept = lonely.filter((x) => x >= at).length + right;
  return { precision: right / kept, recall: right / paired.length };
}

t.test('a big corpus with few partners: --min where the tail above the no-partner mode begins', async (t) => {
  // 20,000 documents without a partner (their nearest by chance, at levels of their own), 1.5% with one: no
  // second mode to split at
  const draw = documents(3);
  const chance = { mean: 0.2, sd: 0.04, beta: 0.02 };
  const lonely = draw(20_000, chance);
  const paired = draw(300, chance, { mean: 0.62, sd: 0.08 });
  const band = alignBand([...lonely.first, ...paired.first], {}, true, [...lonely.second, ...paired.second]);
  const p = band.proposed.min;
  t.equal(p?.kind, 'tail', bandText(band));
  const at = p?.at ?? 0;
  const q = quality(lonely.first, paired.first, at);
  t.ok(
    Math.abs(q.precision - (p?.precision ?? 0)) <= 0.05,
    `precision above ${at}: ${q.precision.toFixed(3)} (estimated ${p?.precision})`,
  );
  t.ok(q.precision >= 0.75, 'near the 0.8 asked for');
  t.ok(q.recall >= 0.85, `recall above ${at}: ${q.recall.toFixed(3)}`);
  t.equal(band.min, at, 'taken with --auto-band');
  t.equal(p?.above, [...lonely.first, ...paired.first].filter((x) => x >= at).length, 'documents above it');
  t.match(
    bandText(band),
    /a tail of \d+ documents above a no-partner mode .* by each one's second-nearest score/,
  );
  // no tail where every document is lonely, nor without second scores
  const alone = draw(20_000, chance);
  t.equal(alignBand(alone.first, {}, true, alone.second).proposed.min, undefined, 'none without partners');
  t.equal(
    alignBand([...lonely.first, ...paired.first], {}, true).proposed.min,
    undefined,
    'none without seconds',
  );
});

t.test('two modes in a big corpus: --min where the chance documents above it are 20%', async (t) => {
  // 9,000 documents whose nearest is chance, 10% with a partner: two modes
  const draw = documents(13);
  const chance = { mean: 0.22, sd: 0.03, beta: 0.02 };
  const lonely = draw(9_000, chance);
  const paired = draw(1_000, chance, { mean: 0.52, sd: 0.08 });
  const all = [...lonely.first, ...paired.first];
  const seconds = [...lonely.second, ...paired.second];
  const valley = split([...all].sort((a, b) => a - b));
  t.ok(valley !== undefined && valley.kind === undefined, 'the scores have two modes');
  const band = alignBand(all, {}, true, seconds);
  t.equal(band.proposed.min?.kind, 'tail', bandText(band));
  const tail = quality(lonely.first, paired.first, band.min);
  const estimated = band.proposed.min?.precision ?? 0;
  // A paired document's chance best counts as a chance second: cautious, never bold.
  t.ok(
    tail.precision >= estimated - 0.02 && tail.precision - estimated <= 0.15,
    `precision above ${band.min}: ${tail.precision.toFixed(3)}, estimated ${estimated}`,
  );
  t.ok(tail.recall >= 0.9, `recall ${tail.recall.toFixed(3)}`);
  // Where the paired documents are most, the lower half is theirs: the valley stays.
  const few = draw(1_500, chance);
  const most = draw(3_000, chance, { mean: 0.6, sd: 0.06 });
  const kept = alignBand([...few.first, ...most.first], {}, true, [...few.second, ...most.second]).proposed
    .min;
  t.ok(
    kept !== undefined && kept.kind === undefined,
    `the valley when partners are most (${JSON.stringify(kept)})`,
  );
});

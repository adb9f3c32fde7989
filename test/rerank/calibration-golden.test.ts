/**
 * The calibration math that exists on both sides (the training kit's Python and the service's TypeScript)
 * against one golden file, test/fixtures/calibration-golden.json, which training/tests/test_golden.py reads
 * too: the Platt fit, the reliability figures, the rerank order's rescale, the choice of the label cut and the
 * canonical pair order. The cascade's band is chosen here only; its figures are pinned all the same.
 */
import { readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { bestModelCut, fitPlatt, reliability, rescaleRanking } from '../../src/annotations/index.js';
import type { Calibration } from '../../src/models/ports.js';
import { type BandOptions, type BandSet, chooseBand } from '../../src/rerank/cascade-band.js';
import { canonicalPair } from '../../src/rerank/core.js';

interface Golden {
  platt: { scores: number[]; gold: number[]; expected: { a: number; b: number } };
  reliability: { scores: number[]; gold: number[]; bins: number; expected: { ece: number; brier: number } };
  rescale: Array<{
    ranking: Calibration;
    old: { a: number; b: number } | null;
    new: { a: number; b: number };
    expected: Calibration;
  }>;
  cut: Array<{ scores: number[]; gold: number[]; expected: { cut: number; f1: number } }>;
  pair_order: Array<{
    a: string;
    b: string;
    order: 'shorter-first' | 'longer-first';
    expected: [string, string];
  }>;
  band: {
    sets: BandSet[];
    options: BandOptions;
    expected: { band: [number, number]; met: boolean; escalated: number[] };
  };
}

const golden = JSON.parse(
  readFileSync(new URL('../fixtures/calibration-golden.json', import.meta.url), 'utf8'),
) as Golden;
const scored = (scores: number[], gold: number[]) =>
  scores.map((score, i) => ({ score, gold: gold[i] === 1 }));
const near = (t: Test, got: number, want: number, tol: number, what: string) =>
  t.ok(Math.abs(got - want) <= tol, `${what}: ${got} vs ${want} (±${tol})`);

t.test('Platt scaling: the same (a, b) as the kit’s fit', async (t) => {
  const fit = fitPlatt(scored(golden.platt.scores, golden.platt.gold));
  near(t, fit.a, golden.platt.expected.a, 1e-6, 'a');
  near(t, fit.b, golden.platt.expected.b, 1e-6, 'b');
});

t.test('reliability: the same ECE and Brier score', async (t) => {
  const g = golden.reliability;
  const r = reliability(
    g.scores,
    g.gold.map((y) => y === 1),
    g.bins,
  );
  near(t, r.ece, g.expected.ece, 1e-9, 'ECE');
  near(t, r.brier, g.expected.brier, 1e-9, 'Brier');
});

t.test('the rerank order carried to a new reported scale: the same weights', async (t) => {
  for (const r of golden.rescale) {
    const got = rescaleRanking(r.ranking, r.old ?? undefined, r.new);
    // the kit rounds the weights it writes to 6 places
    near(t, got.w_logit, r.expected.w_logit, 1e-6, 'w_logit');
    near(t, got.bias, r.expected.bias, 1e-6, 'bias');
    t.equal(got.w_cosine, r.expected.w_cosine, 'w_cosine unchanged');
  }
});

t.test('the label cut: the same grid, rule and tie-break as the kit', async (t) => {
  for (const c of golden.cut) {
    const best = bestModelCut(scored(c.scores, c.gold));
    t.equal(best?.threshold, c.expected.cut);
    t.equal(best?.f1, c.expected.f1);
  }
});

t.test('the canonical pair order: the same side first as the kit', async (t) => {
  const wrong = golden.pair_order.filter(
    (c) => canonicalPair([c.a, c.b], c.order).join('\u0000') !== c.expected.join('\u0000'),
  );
  t.same(wrong, [], `${golden.pair_order.length} pairs`);
});

t.test('the cascade band: the pinned choice', async (t) => {
  const choice = chooseBand(golden.band.sets, golden.band.options);
  t.same(choice.band, golden.band.expected.band);
  t.equal(choice.met, golden.band.expected.met);
  t.same(
    choice.sets.map((s) => s.escalated),
    golden.band.expected.escalated,
  );
});

/** Platt scaling from annotations: the fit recovers a known map, composes with the model's, keeps the rank order. */
import t from 'tap';
import { composePlatt, fitPlatt, rescaleRanking } from '../../src/annotations/index.js';
import { calibrated } from '../../src/search/rank.js';

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));
const logit = (p: number) => Math.log(p / (1 - p));

t.test('fitPlatt: the maximum-likelihood map of data drawn from a known one', async (t) => {
  // At each of 21 model logits z in [-3, 3], 200 pairs of which round(200 * sigmoid(2 z - 1)) are paraphrases.
  const scored = [];
  for (let k = 0; k <= 20; k++) {
    const z = -3 + (6 * k) / 20;
    const positives = Math.round(200 * sigmoid(2 * z - 1));
    for (let i = 0; i < 200; i++) scored.push({ score: sigmoid(z), gold: i < positives });
  }
  const { a, b } = fitPlatt(scored);
  t.ok(Math.abs(a - 2) < 0.02 && Math.abs(b + 1) < 0.02, `a ${a.toFixed(4)} ~ 2, b ${b.toFixed(4)} ~ -1`);
  const sep = fitPlatt([
    { score: 0.9, gold: true },
    { score: 0.2, gold: false },
  ]);
  t.ok(Number.isFinite(sep.a) && sep.a > 0, 'separable data: a finite, positive slope (the ridge)');
});

t.test(
  'composePlatt and rescaleRanking: one map of the model logit; the rank score does not move',
  async (t) => {
    const inner = { a: 0.5, b: -0.4 };
    const outer = { a: 1.5, b: 0.3 };
    const both = composePlatt(inner, outer);
    const ranking = { w_logit: 0.25, w_cosine: 1.07, bias: -3.9 };
    const moved = rescaleRanking(ranking, inner, both);
    t.equal(moved.w_cosine, ranking.w_cosine);
    for (const z of [-4, -1, 0, 2.5, 6]) {
      const p1 = sigmoid(inner.a * z + inner.b);
      t.ok(
        Math.abs(sigmoid(both.a * z + both.b) - sigmoid(outer.a * logit(p1) + outer.b)) < 1e-12,
        `z ${z}: composed`,
      );
      for (const cos of [0.3, 0.9]) {
        const p2 = sigmoid(both.a * z + both.b);
        t.ok(
          Math.abs(calibrated(ranking, p1, cos) - calibrated(moved, p2, cos)) < 1e-9,
          `z ${z}, cosine ${cos}: same rank score`,
        );
      }
    }
    t.same(composePlatt(undefined, outer), outer, 'a model without a label calibration: the fit itself');
  },
);

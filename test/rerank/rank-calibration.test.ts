/**
 * The rerank calibration (config.json's paramine.calibration): the combined rank score orders the candidates,
 * while the label, the probabilities and the filters stay the cross-encoder's own.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CrossEncoder } from '../../src/rerank/index.js';
import { calibrated, rerankRows } from '../../src/search/rank.js';
import type { Candidate } from '../../src/search/types.js';
import { labelAt } from '../../src/text/labels.js';

const cal = { w_logit: 0.5, w_cosine: 8, bias: -6 };

/** The tiny Turku cross-encoder with `paramine` as its config block, opened in this thread. */
async function tinyWith(t: Test, paramine: Record<string, unknown>): Promise<CrossEncoder> {
  const dir = mkdtempSync(join(tmpdir(), 'paramine-cal-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync('test/fixtures/tiny-turku', dir, { recursive: true });
  const cfgPath = join(dir, 'config.json');
  writeFileSync(cfgPath, JSON.stringify({ ...JSON.parse(readFileSync(cfgPath, 'utf8')), paramine }));
  const ce = await CrossEncoder.open(dir, { worker: false });
  t.teardown(() => ce.close());
  return ce;
}

t.test('calibrated: sigmoid of the weighted logit and cosine; monotone in both', async (t) => {
  const z = 0.5 * Math.log(0.8 / 0.2) + 8 * 0.7 - 6;
  t.ok(Math.abs(calibrated(cal, 0.8, 0.7) - 1 / (1 + Math.exp(-z))) < 1e-12);
  t.ok(
    calibrated(cal, 0.9, 0.7) > calibrated(cal, 0.8, 0.7),
    'higher cross-encoder probability ranks higher',
  );
  t.ok(calibrated(cal, 0.8, 0.8) > calibrated(cal, 0.8, 0.7), 'higher cosine ranks higher');
  t.ok(
    Number.isFinite(calibrated(cal, 1, 0.5)) && Number.isFinite(calibrated(cal, 0, 0.5)),
    'p = 0 or 1 is clipped',
  );
  t.equal(
    calibrated({ w_logit: 1, w_cosine: 0, bias: 0 }, 0.3, 0.9).toFixed(12),
    (0.3).toFixed(12),
    'identity',
  );
});

t.test(
  'a cross-encoder reads paramine.calibration from config.json; rerankRows ranks by the calibrated value',
  async (t) => {
    // cosine alone decides: the model's own probabilities barely count
    const ce = await tinyWith(t, {
      label_scheme: 'turku',
      calibration: { w_logit: 1e-6, w_cosine: 50, bias: -25 },
    });
    t.same(ce.calibration, { w_logit: 1e-6, w_cosine: 50, bias: -25 });
    const row = [0.2, 0.9, 0.5].map(
      (cosine, i) => ({ id: i, text: `candidate ${i}`, cosine, annRank: i + 1 }) as unknown as Candidate,
    );
    await rerankRows(ce, ['a query'], [row]);
    t.same(
      row.map((c) => c.cosine),
      [0.9, 0.5, 0.2],
      'ordered by the calibrated probability',
    );
    const own = await ce.score(row.map((c) => ['a query', c.text] as const));
    row.forEach((c, k) => {
      const mine = own[k];
      t.same(c.probabilities, mine?.probabilities, "the probabilities are the model's own");
      t.equal(c.label, mine?.label, 'and so is the label');
    });
  },
);

t.test(
  'labelAt: the cut on P(paraphrase) decides between the positive and the negative labels',
  async (t) => {
    const probs = { not_paraphrase: 0.3, paraphrase: 0.7 };
    t.equal(labelAt(probs, ['paraphrase']), 'paraphrase', 'no cut: the arg-max');
    t.equal(labelAt(probs, ['paraphrase'], 0.8), 'not_paraphrase', '0.7 is under a cut of 0.8');
    t.equal(
      labelAt({ '4': 0.2, '3': 0.15, '2': 0.5, '1': 0.15 }, ['4', '3'], 0.3),
      '4',
      'Turku: the likelier positive',
    );
  },
);

t.test(
  'a model whose config says rerank_order cosine labels candidates and keeps the cosine order',
  async (t) => {
    // The calibration would put the lowest cosine first; the order stays the cosine's all the same.
    const ce = await tinyWith(t, {
      label_scheme: 'turku',
      rerank_order: 'cosine',
      calibration: { w_logit: 1e-6, w_cosine: -50, bias: 25 },
    });
    t.equal(ce.rerankOrder, 'cosine');
    const row = [0.9, 0.5, 0.2].map(
      (cosine, i) => ({ id: i, text: `candidate ${i}`, cosine, annRank: i + 1 }) as unknown as Candidate,
    );
    await rerankRows(ce, ['a query'], [row]);
    t.same(
      row.map((c) => c.cosine),
      [0.9, 0.5, 0.2],
      'cosine order kept',
    );
    t.ok(
      row.every((c) => c.label !== undefined),
      'every candidate still labeled',
    );
  },
);

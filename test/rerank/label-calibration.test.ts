/**
 * A binary cross-encoder's label calibration (config.json's `paramine.label_calibration`, Platt scaling written by
 * paramine-train reranker --stage label-calibrate): the reported P(paraphrase) is sigmoid(a * logit + b) of the
 * model's own logit, the label cut is on that scale, and a model with other labels refuses one.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { CrossEncoder } from '../../src/rerank/index.js';

const REAL = 'models/paramine-paraphrase-minilm';
const TINY = 'test/fixtures/tiny-turku';
const PAIRS: Array<readonly [string, string]> = [
  ['The cat sat on the mat.', 'A cat was sitting on the mat.'],
  ['The cat sat on the mat.', 'Stock markets fell sharply on Monday.'],
  ['We use the Adam optimizer with a learning rate of 0.001.', 'Adam at 1e-3 trains the model.'],
  ['He plays the guitar.', 'She does not play any instrument.'],
];
const logit = (p: number) => Math.log(p / (1 - p));
const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

const root = mkdtempSync(join(tmpdir(), 'paramine-label-cal-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));

/** A copy of `from` whose config.json's `paramine` block is `paramine(old block)`. */
function variant(
  from: string,
  name: string,
  paramine: (p: Record<string, unknown>) => object,
  onnx?: string,
) {
  const dir = join(root, name);
  cpSync(from, dir, { recursive: true });
  if (onnx) cpSync(join(from, 'variants', onnx), join(dir, 'model.onnx'));
  const config = JSON.parse(readFileSync(join(from, 'config.json'), 'utf8')) as Record<string, unknown>;
  const block = (config.paramine ?? {}) as Record<string, unknown>;
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, paramine: paramine(block) }));
  return dir;
}

const without = ({ label_calibration: _, threshold: __, ...rest }: Record<string, unknown>) => rest;

t.test(
  'reported P(paraphrase) = sigmoid(a * logit(raw P) + b); the label is cut on that scale',
  async (t) => {
    const raw = await CrossEncoder.open(variant(REAL, 'raw', without), { worker: false });
    const a = 0.5;
    const b = -0.4;
    const cut = 0.6;
    const cal = await CrossEncoder.open(
      variant(REAL, 'cal', (p) => ({
        ...without(p),
        label_calibration: { method: 'platt', a, b },
        threshold: cut,
      })),
    );
    t.teardown(async () => {
      await raw.close();
      await cal.close();
    });
    t.same(cal.labelCalibration, { a, b }, 'through the worker thread');
    t.equal(cal.threshold, cut);
    t.equal(raw.labelCalibration, undefined);
    const before = await raw.score(PAIRS);
    const after = await cal.score(PAIRS);
    let worst = 0;
    after.forEach((s, i) => {
      const p = before[i]!.probabilities.paraphrase!;
      const want = sigmoid(a * logit(p) + b);
      worst = Math.max(worst, Math.abs(s.probabilities.paraphrase! - want));
      t.ok(Math.abs(s.probabilities.paraphrase! + s.probabilities.not_paraphrase! - 1) < 1e-12, 'sums to 1');
      t.equal(
        s.label,
        s.probabilities.paraphrase! >= cut ? 'paraphrase' : 'not_paraphrase',
        `pair ${i}: cut ${cut}`,
      );
    });
    t.ok(worst < 1e-6, `matches the formula on the raw probabilities (max diff ${worst.toExponential(1)})`);
    const order = (ss: typeof before) =>
      ss
        .map((s, i) => [s.probabilities.paraphrase!, i] as const)
        .sort((x, y) => y[0] - x[0])
        .map((x) => x[1]);
    t.same(order(after), order(before), 'a > 0: the order of pairs is unchanged');
  },
);

t.test('a single-logit head: the logit is read as that of class 1', async (t) => {
  const two = { 0: 'different', 1: 'paraphrase' };
  const mk = (name: string, extra: object) => {
    const dir = variant(
      TINY,
      name,
      () => ({ positive_labels: ['paraphrase'], ...extra }),
      'single-logit.onnx',
    );
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ ...config, id2label: two, label2id: undefined }),
    );
    return dir;
  };
  const raw = await CrossEncoder.open(mk('one-raw', {}), { worker: false });
  const cal = await CrossEncoder.open(mk('one-cal', { label_calibration: { method: 'platt', a: 2, b: 1 } }), {
    worker: false,
  });
  t.teardown(async () => {
    await raw.close();
    await cal.close();
  });
  const [r] = await raw.score([['the cat', 'a cat']]);
  const [c] = await cal.score([['the cat', 'a cat']]);
  const want = sigmoid(2 * logit(r!.probabilities.paraphrase!) + 1);
  t.ok(Math.abs(c!.probabilities.paraphrase! - want) < 1e-9, 'sigmoid(2 x + 1) of the single logit x');
});

t.test('a label calibration needs a binary model and a positive slope: BAD_CONFIG otherwise', async (t) => {
  const lc = { label_calibration: { method: 'platt', a: 1, b: 0 } };
  await t.rejects(
    CrossEncoder.open(
      variant(TINY, 'turku', () => lc),
      { worker: false },
    ),
    {
      code: 'BAD_CONFIG',
      message: /label_calibration needs a binary model/,
    },
  );
  await t.rejects(
    CrossEncoder.open(
      variant(REAL, 'flat', (p) => ({ ...without(p), label_calibration: { method: 'platt', a: 0, b: 0 } })),
      { worker: false },
    ),
    { code: 'BAD_CONFIG', message: /label_calibration/ },
  );
});

t.test('the committed models: calibrated, and the cut written on the calibrated scale', async (t) => {
  for (const name of ['paramine-paraphrase-minilm-ft-parasci', 'paramine-paraphrase-mpnet-base']) {
    const config = JSON.parse(readFileSync(join('models', name, 'config.json'), 'utf8'));
    const lc = config.paramine.label_calibration;
    t.ok(lc && lc.a > 0, `${name}: a label calibration with a > 0`);
    t.ok(config.paramine.threshold > 0 && config.paramine.threshold < 1, `${name}: a label cut`);
    for (const [set, e] of Object.entries(
      lc.ece as Record<string, { before: number; after_cross_fitted: number }>,
    ))
      t.ok(e.after_cross_fitted < 0.15, `${name} ${set}: cross-fitted ECE ${e.after_cross_fitted} < 0.15`);
  }
});

/**
 * `paramine annotations threshold`: the copy it writes labels at the cut its annotations favour, through the
 * runtime (until 2026-12-01 a model with a rerank calibration got the cut inside that block, which nothing reads).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { AnnotationStore, fitPlatt, modelScores } from '../../src/annotations/index.js';
import { CrossEncoder } from '../../src/rerank/index.js';
import { calibrated } from '../../src/search/rank.js';
import { runCli } from '../helpers/cli.js';

const MODEL = 'models/paramine-paraphrase-minilm-ft-parasci';
const VERSE: readonly [string, string] = [
  'A gentle answer turns away anger, but harsh words make people furious.',
  'A soft answer turneth away wrath: but grievous words stir up anger.',
];

/** An index folder whose annotation store holds one judgement per (P the page showed, verdict). */
async function annotated(judged: Array<{ p: number; positive: boolean; model?: string }>): Promise<string> {
  const index = mkdtempSync(join(tmpdir(), 'paramine-ann-cut-'));
  const store = AnnotationStore.open(join(index, 'annotations'));
  for (const [i, { p, positive, model }] of judged.entries()) {
    await store.put({
      ...(model === undefined ? {} : { model }),
      s1: `query ${i}`,
      s2: `candidate ${i}`,
      label: positive ? 'paraphrase' : 'not_paraphrase',
      annotator: 'ann',
      scheme: 'binary',
      decision: positive ? 'accept' : 'reject',
      probabilities: { paraphrase: p, not_paraphrase: 1 - p },
    });
  }
  await store.close();
  return index;
}

t.test('the cut chosen from the annotations is the one the served copy labels at', async (t) => {
  // 30 paraphrases the model gave 0.96-0.99, 30 non-paraphrases it gave 0.50-0.90: only p >= 0.95 separates them.
  const index = await annotated(
    Array.from({ length: 60 }, (_, i) =>
      i < 30 ? { p: 0.96 + (i % 4) * 0.01, positive: true } : { p: 0.5 + (i % 5) * 0.1, positive: false },
    ),
  );
  t.teardown(() => rmSync(index, { recursive: true, force: true }));
  const out = join(index, 'copy');
  const said = runCli('annotations', 'threshold', '--index', index, '--reranker', MODEL, '--out', out);
  t.match(said, /label cut 0\.95 \(F1 1,/);
  const written = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')).paramine;
  const original = JSON.parse(readFileSync(join(MODEL, 'config.json'), 'utf8')).paramine;
  t.equal(written.threshold, 0.95, 'paramine.threshold, the field the runtime reads');
  t.equal(written.calibration?.threshold, undefined, 'nothing written into the rerank calibration');
  t.same(written.label_calibration, original.label_calibration, 'the label calibration is kept');

  const before = await CrossEncoder.open(MODEL, { worker: false });
  const after = await CrossEncoder.open(out, { worker: false });
  t.teardown(async () => {
    await before.close();
    await after.close();
  });
  t.equal(after.threshold, 0.95);
  const [b] = await before.score([VERSE]);
  const [a] = await after.score([VERSE]);
  t.equal(a!.probabilities.paraphrase, b!.probabilities.paraphrase, 'same model, same probability');
  const p = a!.probabilities.paraphrase!;
  t.ok(
    p > original.threshold && p < 0.95,
    `the verse's translation sits between the two cuts (P ${p.toFixed(3)})`,
  );
  t.equal(b!.label, 'paraphrase', 'at the model card cut');
  t.equal(a!.label, 'not_paraphrase', 'at the cut from the annotations');
});

t.test(
  '--calibrate: what P means on these annotations, on top of the model card; the rerank order kept',
  async (t) => {
    // The page showed 0.50-0.99; only about half of the pairs shown above 0.9 were paraphrases (an over-confident
    // model in this domain), and fewer below.
    const judged = Array.from({ length: 80 }, (_, i) => ({
      p: 0.5 + (0.49 * i) / 79,
      positive: i % 2 === 0 && i > 20,
    }));
    // 20 more judged under the cascade's teacher, on its scale, saying the opposite: left out of the fit.
    const teacher = Array.from({ length: 20 }, (_, i) => ({
      p: 0.95,
      positive: i % 4 === 0,
      model: 'paramine-paraphrase-mpnet-base',
    }));
    const index = await annotated([...judged, ...teacher]);
    t.teardown(() => rmSync(index, { recursive: true, force: true }));
    const out = join(index, 'copy');
    const said = runCli(
      'annotations',
      'threshold',
      '--index',
      index,
      '--reranker',
      MODEL,
      '--out',
      out,
      '--calibrate',
    );
    t.match(
      said,
      /label calibration on 80 annotated pairs \(80 annotations on the model's scale\): P' = sigmoid\(/,
    );
    t.match(said, /ECE there [\d.]+ -> [\d.]+ \(5-fold cross-fitted; in-sample [\d.]+\)/);
    const original = JSON.parse(readFileSync(join(MODEL, 'config.json'), 'utf8')).paramine;
    const written = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')).paramine;

    const fit = fitPlatt(modelScores(asAnnotations(judged)));
    const before = await CrossEncoder.open(MODEL, { worker: false });
    const after = await CrossEncoder.open(out, { worker: false });
    t.teardown(async () => {
      await before.close();
      await after.close();
    });
    const [b] = await before.score([VERSE]);
    const [a] = await after.score([VERSE]);
    const logit = (p: number) => Math.log(p / (1 - p));
    const want = 1 / (1 + Math.exp(-(fit.a * logit(b!.probabilities.paraphrase!) + fit.b)));
    t.ok(
      Math.abs(a!.probabilities.paraphrase! - want) < 1e-6,
      `the copy reports the composed map (${want.toFixed(4)})`,
    );
    t.ok(
      a!.probabilities.paraphrase! < b!.probabilities.paraphrase!,
      'less sure than the model card in this domain',
    );
    t.equal(a!.label, a!.probabilities.paraphrase! >= written.threshold ? 'paraphrase' : 'not_paraphrase');
    for (const [p, cos] of [
      [0.2, 0.5],
      [0.7, 0.8],
      [0.95, 0.6],
    ] as const) {
      const q = 1 / (1 + Math.exp(-(fit.a * logit(p) + fit.b)));
      t.ok(
        Math.abs(calibrated(original.calibration, p, cos) - calibrated(written.calibration, q, cos)) < 1e-9,
        `rank score unchanged at P ${p}, cosine ${cos}`,
      );
    }
    const flat = await annotated(
      Array.from({ length: 60 }, (_, i) => ({ p: 0.5 + i / 200, positive: i < 40 })),
    );
    t.teardown(() => rmSync(flat, { recursive: true, force: true }));
    t.throws(
      () =>
        runCli(
          'annotations',
          'threshold',
          '--index',
          flat,
          '--reranker',
          MODEL,
          '--out',
          join(flat, 'c'),
          '--calibrate',
        ),
      /do not rise with the model's P\(paraphrase\)/,
      'annotations against the model order: refused',
    );
  },
);

/** The judgements as the store would hold them, for modelScores. */
function asAnnotations(judged: Array<{ p: number; positive: boolean }>) {
  return judged.map(({ p, positive }, i) => ({
    id: String(i),
    s1: `query ${i}`,
    s2: `candidate ${i}`,
    label: positive ? 'paraphrase' : 'not_paraphrase',
    annotator: 'ann',
    at: '2026-12-01T00:00:00.000Z',
    scheme: 'binary' as const,
    decision: positive ? ('accept' as const) : ('reject' as const),
    probabilities: { paraphrase: p, not_paraphrase: 1 - p },
  }));
}

/** The annotation report: the model's cut and the cosine's against the annotators' majority, and agreement. */
import t from 'tap';
import type { Annotation } from '../../src/annotations/index.js';
import { annotationReport, cohensKappa, krippendorffAlpha } from '../../src/annotations/index.js';

// Wikipedia's Cohen's kappa example: 50 items, yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> 0.4.
const A = [...Array(25).fill('y'), ...Array(25).fill('n')] as string[];
const B = [
  ...Array(20).fill('y'),
  ...Array(5).fill('n'),
  ...Array(10).fill('y'),
  ...Array(15).fill('n'),
] as string[];

t.test("Cohen's kappa and Krippendorff's alpha on a known table", async (t) => {
  t.equal(Math.round(cohensKappa(A, B) * 1000) / 1000, 0.4);
  t.equal(cohensKappa(['a', 'b', 'a'], ['a', 'b', 'a']), 1, 'perfect agreement');
  // alpha (nominal) of the same 50 units, checked against a direct implementation of the definition: 0.4.
  t.equal(krippendorffAlpha(A.map((a, i) => [a, B[i] as string])), 0.4);
  t.equal(krippendorffAlpha([['x'], ['y']]), null, 'no unit with two values: undefined');
});

let n = 0;
const ann = (s: number, annotator: string, label: string, p?: number, cosine?: number): Annotation => ({
  id: String(n++),
  s1: `q${s}`,
  s2: `c${s}`,
  label,
  annotator,
  at: '2026-11-27T00:00:00.000Z',
  scheme: 'binary',
  decision: label === 'paraphrase' ? 'accept' : 'reject',
  ...(p === undefined ? {} : { probabilities: { paraphrase: p, not_paraphrase: 1 - p } }),
  ...(cosine === undefined ? {} : { cosine }),
});

t.test('the best cut of the model and of the cosine, from the majority of the annotators', async (t) => {
  // Pairs 0-3 are paraphrases (p 0.9, 0.8, 0.7, 0.6), 4-7 not (p 0.65, 0.3, 0.2, 0.1): the best cut is 0.6 or
  // 0.7; the cosine does not separate them (all 0.8).
  const ps = [0.9, 0.8, 0.7, 0.6, 0.65, 0.3, 0.2, 0.1];
  const list = ps.map((p, i) => ann(i, 'ann', i < 4 ? 'paraphrase' : 'not_paraphrase', p, 0.8));
  // A second annotator on pairs 0-3 agrees on 0-2 and differs on 3: pair 3 becomes a tie, left out.
  list.push(ann(0, 'bob', 'paraphrase'), ann(1, 'bob', 'paraphrase'), ann(2, 'bob', 'paraphrase'));
  list.push(ann(3, 'bob', 'not_paraphrase'));
  const r = annotationReport(list);
  t.equal(r.pairs, 7);
  t.equal(r.ties, 1);
  t.equal(r.positives, 3);
  t.equal(r.withProbability, 7);
  t.equal(r.best.model?.threshold, 0.7, 'p >= 0.7 takes the three paraphrases and nothing else');
  t.equal(r.best.model?.f1, 1);
  t.equal(
    r.best.cosine?.f1,
    Math.round(((2 * (3 / 7)) / (1 + 3 / 7)) * 10_000) / 10_000,
    'cosine: all or nothing',
  );
  t.equal(r.agreement.shared, 4);
  t.same(
    r.agreement.kappa.map((k) => [k.a, k.b, k.pairs]),
    [['ann', 'bob', 4]],
  );
});

import t from 'tap';
import { reliability } from '../../src/annotations/index.js';
import {
  classificationMetrics,
  detection,
  firstResult,
  multiClass,
  rankOf,
  rankOfAny,
  retrievalMetrics,
} from '../../src/bench/metrics.js';
import { detectScheme } from '../../src/text/labels.js';

const close = (a: number | undefined, b: number) => a !== undefined && Math.abs(a - b) < 1e-12;

t.test('rankOf: 1-based, the query itself excluded, not found = undefined', async (t) => {
  t.equal(rankOf(7, [7, 3, 9], 5), 1);
  t.equal(rankOf(9, [7, 3, 9]), 3);
  t.equal(rankOf(9, [7, 3, 9], 3), 2, 'the query ranked above the target does not count');
  t.equal(rankOf(7, [7, 3, 9], 3), 1, 'the query ranked below the target changes nothing');
  t.equal(rankOf(4, [7, 3, 9], 3), undefined);
  t.equal(rankOf(4, [], 3), undefined);
  t.equal(rankOf(2n, [5n, 1n, 2n], 1n), 2, 'bigint ids (FAISS labels)');
  t.throws(() => rankOf(3, [3], 3), RangeError);
  t.throws(() => rankOf(3, [3, 4], undefined, [0.5]), RangeError);
});

t.test('rankOf ties: pessimistic, independent of the order the index returned equal scores in', async (t) => {
  // Scores:        a=0.9  t=0.8  b=0.8  c=0.8  d=0.7  -> t shares 0.8 with b and c: rank 1 + 3 = 4.
  t.equal(rankOf('t', ['a', 't', 'b', 'c', 'd'], undefined, [0.9, 0.8, 0.8, 0.8, 0.7]), 4);
  t.equal(rankOf('t', ['a', 'b', 't', 'c', 'd'], undefined, [0.9, 0.8, 0.8, 0.8, 0.7]), 4);
  t.equal(rankOf('t', ['a', 'b', 'c', 't', 'd'], undefined, [0.9, 0.8, 0.8, 0.8, 0.7]), 4);
  t.equal(rankOf('t', ['a', 't', 'b', 'c', 'd'], undefined), 2, 'without scores: the position as given');
  // The query itself (b) inside the tie is not counted: a, t, c -> 3.
  t.equal(rankOf('t', ['a', 't', 'b', 'c', 'd'], 'b', [0.9, 0.8, 0.8, 0.8, 0.7]), 3);
  // Distances work the same way (only equality matters, the list is already best first).
  t.equal(rankOf('t', ['t', 'x', 'y'], undefined, [0.1, 0.1, 0.4]), 2);
  t.equal(rankOf('t', ['t', 'x'], undefined, [0.1, 0.2]), 1, 'no tie');
});

t.test('rankOfAny: the first of several targets; ties lost to non-targets only', async (t) => {
  t.equal(rankOfAny(new Set([9, 3]), [7, 3, 9], 5), 2, 'the first target in the list');
  t.equal(rankOfAny(new Set([9, 3]), [7, 3, 9], 7), 1, 'the query excluded');
  t.equal(rankOfAny(new Set([4, 8]), [7, 3, 9]), undefined);
  t.throws(() => rankOfAny(new Set([3, 5]), [3], 5), RangeError, 'a target that is the query');
  // a, t, u, b tie at 0.8: t is after a and b (non-targets), u (a target) costs nothing -> 3.
  t.equal(rankOfAny(new Set(['t', 'u']), ['a', 't', 'u', 'b'], undefined, [0.8, 0.8, 0.8, 0.8]), 3);
  t.equal(
    rankOfAny(new Set(['t']), ['a', 't', 'b', 'c', 'd'], undefined, [0.9, 0.8, 0.8, 0.8, 0.7]),
    rankOf('t', ['a', 't', 'b', 'c', 'd'], undefined, [0.9, 0.8, 0.8, 0.8, 0.7]),
    'one target: rankOf',
  );
});

t.test('firstResult: the first result other than the query', async (t) => {
  t.equal(firstResult([7, 3, 9], 7), 3, 'the query first: the next one');
  t.equal(firstResult([7, 3, 9], 5), 7);
  t.equal(firstResult([7], 7), undefined, 'only the query');
  t.equal(firstResult([], 1), undefined);
});

t.test('retrieval: top-N, not found within the deepest N, MRR@deepest, per group', async (t) => {
  const r = retrievalMetrics(
    [
      { rank: 1, group: '4' },
      { rank: 3, group: '4' },
      { rank: 12, group: '3' },
      { rank: undefined, group: '3' },
      { rank: 150, group: '4< or 4>' }, // beyond the deepest depth: not found, contributes 0 to MRR
    ],
    [100, 1, 10, 10],
  );
  // Overall, n = 5: top-1 = 1/5, top-10 = 2/5 (ranks 1, 3), top-100 = 3/5 (+12),
  // not found = 2/5 (undefined and 150 > 100), MRR = (1/1 + 1/3 + 1/12 + 0 + 0) / 5 = (17/12) / 5 = 17/60.
  t.equal(r.kind, 'retrieval');
  t.equal(r.n, 5);
  t.same(r.top, { '1': 0.2, '10': 0.4, '100': 0.6 });
  t.equal(r.not_found, 0.4);
  t.ok(close(r.mrr, 17 / 60), `mrr ${r.mrr} = 17/60`);
  // Group 4: ranks 1, 3 -> top-1 1/2, top-10 1, MRR (1 + 1/3)/2 = 2/3.
  t.same(r.labels['4']?.top, { '1': 0.5, '10': 1, '100': 1 });
  t.ok(close(r.labels['4']?.mrr, 2 / 3));
  t.equal(r.labels['4']?.not_found, 0);
  // Group 3: ranks 12, none -> top-100 1/2, MRR 1/24.
  t.same(r.labels['3'], { n: 2, top: { '1': 0, '10': 0, '100': 0.5 }, not_found: 0.5, mrr: 1 / 24 });
  t.same(r.labels['4< or 4>'], { n: 1, top: { '1': 0, '10': 0, '100': 0 }, not_found: 1, mrr: 0 });
});

t.test('retrieval: stable JSON keys, empty input, validation', async (t) => {
  const r = retrievalMetrics([{ rank: 2, group: 'unlabeled' }], [1, 10]);
  t.equal(
    JSON.stringify(r),
    '{"kind":"retrieval","n":1,"top":{"1":0,"10":1},"not_found":0,"mrr":0.5,"labels":{"unlabeled":{"n":1,"top":{"1":0,"10":1},"not_found":0,"mrr":0.5}}}',
  );
  t.same(retrievalMetrics([]), {
    kind: 'retrieval',
    n: 0,
    top: { '1': 0, '10': 0, '100': 0, '1000': 0 },
    not_found: 0,
    mrr: 0,
    labels: {},
  });
  t.throws(() => retrievalMetrics([{ rank: 0, group: 'x' }]), RangeError);
  t.throws(() => retrievalMetrics([{ rank: 1.5, group: 'x' }]), RangeError);
  t.throws(() => retrievalMetrics([], []), RangeError);
  t.throws(() => retrievalMetrics([], [0, 10]), RangeError);
});

t.test('classification: per-label P/R/F1/support and the weighted average, by hand', async (t) => {
  //        gold: a a a b b c      predicted: a a b b c c
  // a: tp 2, predicted 2, gold 3 -> P 1,   R 2/3, F1 2·1·(2/3)/(1 + 2/3) = (4/3)/(5/3) = 0.8
  // b: tp 1, predicted 2, gold 2 -> P 1/2, R 1/2, F1 0.5
  // c: tp 1, predicted 2, gold 1 -> P 1/2, R 1,   F1 2·(1/2)·1/(3/2) = 2/3
  // weighted P  = (3·1   + 2·0.5 + 1·0.5) / 6 = 4.5/6       = 0.75
  // weighted R  = (3·2/3 + 2·0.5 + 1·1)   / 6 = 4/6         = 0.6667 (= accuracy, as always)
  // weighted F1 = (3·0.8 + 2·0.5 + 1·2/3) / 6 = 4.06667/6   = 0.677778
  // (sklearn classification_report agrees: weighted avg 0.75000 0.66667 0.67778.)
  const m = multiClass(['a', 'a', 'a', 'b', 'b', 'c'], ['a', 'a', 'b', 'b', 'c', 'c']);
  t.equal(m.n, 6);
  t.ok(close(m.accuracy, 4 / 6));
  t.ok(close(m.labels.a?.f1, 0.8));
  t.same(m.labels.b, { precision: 0.5, recall: 0.5, f1: 0.5, support: 2 });
  t.ok(close(m.labels.c?.f1, 2 / 3));
  t.equal(m.labels.c?.recall, 1);
  t.ok(close(m.weighted.precision, 0.75));
  t.ok(close(m.weighted.recall, 4 / 6));
  t.ok(close(m.weighted.f1, (3 * 0.8 + 2 * 0.5 + 1 * (2 / 3)) / 6), `weighted f1 ${m.weighted.f1}`);
  t.ok(close(m.weighted.f1, 0.6777777777777778));
});

t.test('classification: zero division is 0; a predicted-only label has support 0 and weight 0', async (t) => {
  // gold: x x y   predicted: x z z   -> y is never predicted (P 0/0 = 0), z never gold (R 0/0 = 0).
  const m = multiClass(['x', 'x', 'y'], ['x', 'z', 'z']);
  t.same(Object.keys(m.labels), ['x', 'y', 'z']);
  t.same(m.labels.y, { precision: 0, recall: 0, f1: 0, support: 1 });
  t.same(m.labels.z, { precision: 0, recall: 0, f1: 0, support: 0 });
  // x: P 1, R 1/2, F1 2/3; weighted F1 = (2·2/3 + 1·0 + 0·0) / 3 = 4/9.
  t.ok(close(m.weighted.f1, 4 / 9));
  t.same(multiClass([], []), { n: 0, accuracy: 0, labels: {}, weighted: { precision: 0, recall: 0, f1: 0 } });
  t.throws(() => multiClass(['a'], []), RangeError);
  t.same(detection([false, false], [false, false]), { precision: 0, recall: 0, f1: 0, support: 0 });
});

t.test('classification: binary paraphrase P/R/F1 through the scheme, stable JSON keys', async (t) => {
  const gold = ['1', '0', '1', '1'];
  const pred = ['1', '1', '0', '1'];
  // Positive class: tp 2 (rows 0, 3), predicted positive 3, gold positive 3 -> P = R = F1 = 2/3.
  const r = classificationMetrics(gold, pred, detectScheme(gold));
  t.ok(close(r.binary?.f1, 2 / 3));
  t.ok(close(r.binary?.precision, 2 / 3));
  t.same(Object.keys(r), ['kind', 'n', 'accuracy', 'labels', 'weighted', 'binary']);
  t.same(Object.keys(r.labels['1'] ?? {}), ['precision', 'recall', 'f1', 'support']);
  t.same(Object.keys(r.weighted), ['precision', 'recall', 'f1']);
  t.equal(r.accuracy, 0.5);
  t.equal(classificationMetrics(gold, pred).binary, null, 'no scheme: no binary');
  t.equal(classificationMetrics(['yes', 'no'], ['yes', 'no'], detectScheme(['yes', 'no'])).binary, null);
  const unknownPred = classificationMetrics(gold, ['1', '1', '2', '1'], detectScheme(gold));
  t.equal(unknownPred.binary, null, 'a prediction the scheme cannot map: no binary');
});

t.test('classification: Turku layout (full labels, base labels, subsumption and flags)', async (t) => {
  const gold = ['4<', '4>i', '4', '3', '2', '4is'];
  const pred = ['4', '4>', '4', '2', '2', '4si'];
  const r = classificationMetrics(gold, pred, detectScheme(gold));
  // Full labels, 4si read as 4is: correct rows 2, 4, 5 -> 3/6.
  t.equal(r.accuracy, 0.5);
  t.ok(r.labels['4is'], 'canonical label key');
  t.notOk(r.labels['4si']);
  // Binary (base >= 3): gold T T T T F T, pred T T T F F T -> tp 4, predicted 4, gold 5: P 1, R 0.8,
  // F1 = 2·0.8/1.8 = 0.8889.
  t.equal(r.binary?.precision, 1);
  t.equal(r.binary?.recall, 0.8);
  t.ok(close(r.binary?.f1, 1.6 / 1.8));
  const turku = r.turku;
  if (!turku) throw new Error('no turku section');
  // Base: gold 4 4 4 3 2 4, pred 4 4 4 2 2 4 -> accuracy 5/6; label 3 never predicted -> P 0;
  // label 2: tp 1, predicted 2, gold 1 -> P 0.5, R 1.
  t.ok(close(turku.base.accuracy, 5 / 6));
  t.same(Object.keys(turku.base.labels), ['2', '3', '4']);
  t.same(turku.base.labels['4'], { precision: 1, recall: 1, f1: 1, support: 4 });
  t.same(turku.base.labels['3'], { precision: 0, recall: 0, f1: 0, support: 1 });
  t.equal(turku.base.labels['2']?.precision, 0.5);
  // < : gold only row 0, never predicted -> 0/0/0, support 1.  > : row 1 both -> 1/1/1.
  t.same(turku.subsumption['<'], { precision: 0, recall: 0, f1: 0, support: 1 });
  t.same(turku.subsumption['>'], { precision: 1, recall: 1, f1: 1, support: 1 });
  // i: gold rows 1, 5; predicted row 5 -> P 1, R 0.5, F1 2/3.  s: row 5 both -> 1/1/1.
  t.equal(turku.flags.i.precision, 1);
  t.equal(turku.flags.i.recall, 0.5);
  t.ok(close(turku.flags.i.f1, 2 / 3));
  t.same(turku.flags.s, { precision: 1, recall: 1, f1: 1, support: 1 });
  t.same(Object.keys(r), ['kind', 'n', 'accuracy', 'labels', 'weighted', 'binary', 'turku']);
  const over = classificationMetrics(gold, pred, detectScheme(gold, { positive: ['4'] }));
  // Positive = base 4 only: gold T T T F F T, pred T T T F F T -> all correct.
  t.same(over.binary, { precision: 1, recall: 1, f1: 1 });
});

t.test('reliability: bins of P against the share of positives, ECE and Brier', async (t) => {
  // Bin 0.0-0.1: P 0.05, 0.05 (truths F, T) -> mean 0.05, observed 0.5; bin 0.9-1.0: P 0.95 and 1.0 (T, T).
  const r = reliability([0.05, 0.05, 0.95, 1], [false, true, true, true]);
  t.same(
    r.bins.map((b) => [b.lo, b.n]),
    [
      [0, 2],
      [0.9, 2],
    ],
    'empty bins left out; 1.0 falls in the last bin',
  );
  t.ok(close(r.bins[0]?.observed, 0.5) && close(r.bins[1]?.meanP, 0.975));
  t.ok(close(r.ece, 0.5 * 0.45 + 0.5 * 0.025), `ECE ${r.ece}`);
  t.ok(close(r.brier, (0.05 ** 2 + 0.95 ** 2 + 0.05 ** 2 + 0) / 4), `Brier ${r.brier}`);
  t.ok(close(reliability([0.3, 0.7], [false, true], 2).ece, 0.3), 'two bins: |0.3 - 0| and |0.7 - 1|');
});

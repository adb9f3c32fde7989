import t from 'tap';
import { collapseToBinary } from '../../src/bench/classify.js';
import {
  detectScheme,
  parseTurku,
  positiveLabelsOf,
  positiveProbability,
  TURKU_SUBSUMED,
  UNLABELED,
} from '../../src/text/labels.js';

t.test('binary: 0/1 and paraphrase/not, case-insensitive; unknown labels are undefined', async (t) => {
  const s = detectScheme(['0', '1', '1']);
  t.equal(s.name, 'binary');
  t.equal(s.isPositive('1'), true);
  t.equal(s.isPositive('0'), false);
  t.equal(s.isPositive('2'), undefined);
  t.equal(s.isPositive(undefined), true, 'a missing label is a positive');
  t.equal(s.base('1'), '1');
  t.same(s.flags('1'), []);
  t.equal(s.retrievalGroup('1'), '1');

  const w = detectScheme(['paraphrase', 'not_paraphrase', 'NOT', ' Paraphrase ']);
  t.equal(w.name, 'binary');
  t.same(['paraphrase', 'Paraphrase', 'not', 'not_paraphrase'].map(w.isPositive), [true, true, false, false]);
  t.equal(detectScheme(['1', '1']).name, 'binary', 'a file of only 1 is binary, not Turku');
});

t.test('turku: base, subsumption, flags, canonical spelling, positive = base >= 3', async (t) => {
  const s = detectScheme(['1', '2', '3', '4', '4<', '4>is', '4i']);
  t.equal(s.name, 'turku');
  t.equal(s.base('4>is'), '4');
  t.equal(s.subsumption('4>is'), '>');
  t.equal(s.subsumption('4<'), '<');
  t.equal(s.subsumption('4i'), undefined);
  t.same(s.flags('4>is'), ['i', 's']);
  t.same(s.flags('4si'), ['i', 's'], 'flags sorted');
  t.same(s.flags('3'), []);
  t.equal(s.canonical('4>si'), '4>is');
  t.equal(s.canonical('2'), '2');
  t.same(['1', '2', '3', '4', '4<', '4>i', '4is'].map(s.isPositive), [
    false,
    false,
    true,
    true,
    true,
    true,
    true,
  ]);
  t.equal(s.isPositive('5'), undefined);
  t.equal(s.isPositive(undefined), true);
  t.same(parseTurku('4<is'), { base: '4', sub: '<', flags: ['i', 's'] });
  t.equal(parseTurku('4x'), undefined);
});

t.test(
  'turku retrieval groups as the paper: 4 (flags ignored), 4< or 4>, 3, and 2/1 as themselves',
  async (t) => {
    const s = detectScheme(['4', '3']);
    t.equal(s.name, 'turku');
    t.same(
      ['4', '4i', '4s', '4is', '4<', '4>', '4<i', '4>s', '3', '2', '1'].map((l) => s.retrievalGroup(l)),
      ['4', '4', '4', '4', TURKU_SUBSUMED, TURKU_SUBSUMED, TURKU_SUBSUMED, TURKU_SUBSUMED, '3', '2', '1'],
    );
    t.equal(TURKU_SUBSUMED, '4< or 4>');
  },
);

t.test('--positive overrides: exact label or Turku base label', async (t) => {
  const s = detectScheme(['3', '4>i', '4'], { positive: ['4'] });
  t.same(['3', '4', '4>i', '4<'].map(s.isPositive), [false, true, true, true]);
  const exact = detectScheme(['3', '4>i', '4'], { positive: ['4', '3'] });
  t.equal(exact.isPositive('3'), true);
  const b = detectScheme(['0', '1'], { positive: ['0'] });
  t.same(['0', '1'].map(b.isPositive), [true, false]);
});

t.test('positive-only and custom', async (t) => {
  const p = detectScheme([undefined, undefined]);
  t.equal(p.name, 'positive-only');
  t.equal(p.isPositive(undefined), true);
  t.equal(p.retrievalGroup(undefined), UNLABELED);
  t.equal(detectScheme([]).name, 'positive-only');

  const c = detectScheme(['yes', 'no', 'maybe']);
  t.equal(c.name, 'custom');
  t.equal(c.isPositive('yes'), undefined, 'custom labels are unknown without --positive');
  t.equal(c.retrievalGroup('maybe'), 'maybe');
  const c2 = detectScheme(['yes', 'no', 'maybe'], { positive: ['yes'] });
  t.same(['yes', 'no', 'maybe'].map(c2.isPositive), [true, false, false]);
  t.equal(detectScheme(['0', '1', '5']).name, 'custom', 'STS-like 0..5 is neither binary nor Turku');
});

t.test('a binary model on Turku gold is scored as the binary task (base >= 3 positive)', async (t) => {
  const model = ['not_paraphrase', 'paraphrase'];
  const turku = ['4', '4>i', '3s', '2', '1'];
  t.same(collapseToBinary(turku, model), {
    gold: ['paraphrase', 'paraphrase', 'paraphrase', 'not_paraphrase', 'not_paraphrase'],
    rule: 'turku gold as binary (turku base >= 3)',
  });
  t.same(collapseToBinary(turku, model, ['4'])?.gold, [
    'paraphrase',
    'paraphrase',
    'not_paraphrase',
    'not_paraphrase',
    'not_paraphrase',
  ]);
  t.equal(collapseToBinary(['1', '0'], model), undefined, 'binary gold: nothing to collapse');
  t.equal(collapseToBinary(turku, ['1', '2', '3', '4']), undefined, 'a Turku model keeps the Turku layout');
  t.equal(collapseToBinary(['yes', 'no'], model), undefined, 'custom gold without --positive: no rule');
  t.same(collapseToBinary(['yes', 'no'], model, ['yes'])?.gold, ['paraphrase', 'not_paraphrase']);
});

t.test('positive labels of a classifier: declared, else the scheme, else the usual names', async (t) => {
  t.same(positiveLabelsOf(['not_paraphrase', 'paraphrase']), ['paraphrase']);
  t.same(positiveLabelsOf(['0', '1']), ['1']);
  t.same(positiveLabelsOf(['1', '2', '3', '3i', '4', '4<', '4>is']), ['3', '3i', '4', '4<', '4>is']);
  t.same(positiveLabelsOf(['contradiction', 'entailment', 'neutral']), ['entailment']);
  t.same(positiveLabelsOf(['no', 'yes']), ['yes']);
  t.same(positiveLabelsOf(['LABEL_0', 'LABEL_1']), [], 'names that say nothing: no positive label');
  t.same(positiveLabelsOf(['1', '2', '3', '4'], ['4']), ['4'], 'a declaration wins over the scheme');
  t.equal(positiveProbability({ '3': 0.25, '4': 0.5, '1': 0.25 }, ['3', '4']), 0.75);
  t.equal(positiveProbability({ a: 1 }, []), 0);
});

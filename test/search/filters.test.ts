/** Pair filters: char n-gram bounds, any label's probability, OR over filters, three-valued before reranking. */
import t from 'tap';
import {
  evaluateFilter,
  filterLabels,
  lexicalFilterSchema,
  lexicalMeasures,
} from '../../src/search/lexical.js';
import { parseInput } from '../../src/validate.js';

const A = 'The committee approved the new budget on Monday.';
const B = 'On Monday the committee approved the new budget.';
const C = 'Heavy rain flooded several streets downtown.';

t.test('char n-gram cosine bounds: min inclusive, max exclusive', async (t) => {
  const near = lexicalMeasures(A, B).charNgramCosine;
  const far = lexicalMeasures(A, C).charNgramCosine;
  t.ok(near > 0.5 && far < 0.3, `${near} / ${far}`);
  t.equal(evaluateFilter(A, B, { charNgramMin: near }), true);
  t.equal(evaluateFilter(A, B, { charNgramMax: near }), false);
  t.equal(evaluateFilter(A, C, { charNgramMax: 0.3 }), true);
  t.equal(evaluateFilter(A, C, { charNgramMin: 0.3 }), false);
});

t.test("any label's probability; unknown until the cross-encoder ran", async (t) => {
  const f = { probabilityMin: { not_paraphrase: 0.4 } };
  t.equal(evaluateFilter(A, C, f), undefined, 'no probabilities yet');
  t.equal(
    evaluateFilter(A, C, f, undefined, { paraphrase: 0.55, not_paraphrase: 0.45 }),
    true,
    'not the top label',
  );
  t.equal(evaluateFilter(A, C, f, undefined, { paraphrase: 0.7, not_paraphrase: 0.3 }), false);
  t.equal(
    evaluateFilter(A, C, { probabilityMax: { paraphrase: 0.5 } }, undefined, { paraphrase: 0.5 }),
    false,
  );
  t.equal(evaluateFilter(A, C, { minTokens: 50, ...f }), false, 'a cheap failure decides at once');
});

t.test("anyOf: Turku's confident negatives (n-gram < 0.1 or P(negative) > 0.4) as one filter", async (t) => {
  const turku = parseInput(lexicalFilterSchema, {
    anyOf: [{ charNgramMax: 0.1 }, { probabilityMin: { not_paraphrase: 0.4 } }],
  });
  const unrelated = 'Zebras graze quietly.';
  t.ok(lexicalMeasures(A, unrelated).charNgramCosine < 0.1);
  t.equal(evaluateFilter(A, unrelated, turku), true, 'the n-gram branch holds: no probabilities needed');
  t.equal(evaluateFilter(A, B, turku), undefined, 'n-gram branch fails, the other is not known yet');
  t.equal(evaluateFilter(A, B, turku, undefined, { not_paraphrase: 0.9, paraphrase: 0.1 }), true);
  t.equal(evaluateFilter(A, B, turku, undefined, { not_paraphrase: 0.1, paraphrase: 0.9 }), false);
  t.equal(
    evaluateFilter(A, B, { anyOf: [{ bleuMin: 99 }, { charNgramMax: 0.01 }] }),
    false,
    'every branch fails',
  );
  t.same(filterLabels(turku), ['not_paraphrase']);
});

t.test('bad filters are refused with the field named', async (t) => {
  t.throws(() => parseInput(lexicalFilterSchema, { charNgramMin: 0.5, charNgramMax: 0.2 }), {
    code: 'BAD_INPUT',
    field: 'charNgramMin',
  });
  t.throws(() => parseInput(lexicalFilterSchema, { anyOf: [{ charNgramMax: 2 }] }), {
    code: 'BAD_INPUT',
    field: 'anyOf[0].charNgramMax',
  });
  t.throws(() => parseInput(lexicalFilterSchema, { anyOf: [] }), { code: 'BAD_INPUT', field: 'anyOf' });
  t.throws(() => parseInput(lexicalFilterSchema, { probabilityMin: { x: 1.5 } }), { code: 'BAD_INPUT' });
  t.throws(() => parseInput(lexicalFilterSchema, { nope: 1 }), { code: 'BAD_INPUT' });
});

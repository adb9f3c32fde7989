/** Best-clause spans: clauses cut at punctuation with exact offsets; runs are the expected substrings. */
import t from 'tap';
import { bestSpan, clauseRuns, splitClauses } from '../../src/text/clauses.js';

const S = 'We train a tagger, which labels spans; then we evaluate it (on news).';

t.test('clauses are cut at punctuation and their offsets give the text back', async (t) => {
  const clauses = splitClauses(S);
  t.same(
    clauses.map((c) => c.text),
    ['We train a tagger', 'which labels spans', 'then we evaluate it', 'on news'],
  );
  for (const c of clauses) t.equal(S.slice(c.start, c.end), c.text);
  t.same(splitClauses('No punctuation here'), [{ start: 0, end: 19, text: 'No punctuation here' }]);
  t.same(splitClauses(', ; :'), [], 'punctuation alone holds no clause');
  t.same(
    splitClauses('As shown by Smith et al. (2019), e.g. in MT, it works.').map((c) => c.text),
    ['As shown by Smith et al', '2019', 'e.g. in MT', 'it works'],
    'full stops inside the sentence do not split',
  );
});

t.test('runs: every contiguous run but the whole sentence, as substrings', async (t) => {
  const runs = clauseRuns(S);
  // 4 clauses: 4 + 3 + 2 + 1 runs, less the whole sentence.
  t.equal(runs.length, 9);
  for (const r of runs) t.equal(S.slice(r.start, r.end), r.text);
  t.ok(runs.some((r) => r.text === 'which labels spans; then we evaluate it'));
  t.notOk(
    runs.some((r) => r.start === 0 && r.text.endsWith('on news')),
    'not the whole sentence',
  );
  t.same(clauseRuns('One clause only.'), [], 'a one-clause sentence has no sub-sentence span');
  t.equal(clauseRuns(S, { minChars: 19 }).length, 6, 'minChars drops short runs');
});

t.test('bestSpan keeps the highest score, the first on ties', async (t) => {
  const runs = clauseRuns(S);
  const scores = runs.map((_, i) => (i === 4 ? 0.9 : 0.1));
  t.equal(bestSpan(runs, scores)?.span, runs[4]);
  t.equal(
    bestSpan(
      runs,
      runs.map(() => 0.5),
    )?.span,
    runs[0],
  );
  t.equal(bestSpan([], []), undefined);
});

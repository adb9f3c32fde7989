import t, { type Test } from 'tap';
import { type DiffSpan, type PairDiff, pairDiff } from '../../src/text/index.js';

/** `[op:text]` for changed spans, plain text for equal ones; moves carry their id. */
const render = (spans: DiffSpan[]) =>
  spans.map((s) => (s.op === 'equal' ? s.text : `[${s.op}${s.move ?? ''}:${s.text}]`)).join(' ');

function check(t: Test, a: string, b: string, d: PairDiff): void {
  for (const [side, text] of [
    [d.a, a],
    [d.b, b],
  ] as const) {
    let at = 0;
    for (const s of side) {
      t.ok(s.start >= at && s.end > s.start, `span ${s.op} ${s.start}-${s.end} in order`);
      t.equal(text.slice(s.start, s.end), s.text, 'offsets point at the span text');
      at = s.end;
    }
  }
  t.notOk(
    d.a.some((s) => s.op === 'insert'),
    'the first side has no inserts',
  );
  t.notOk(
    d.b.some((s) => s.op === 'delete'),
    'the second side has no deletes',
  );
}

t.test('identical sentences are one equal span on each side', async (t) => {
  const d = pairDiff('The cat sat on the mat.', 'the cat sat on the mat.');
  t.same(d.a, [{ op: 'equal', start: 0, end: 23, text: 'The cat sat on the mat.' }], 'case is ignored');
  t.same(d.b.length, 1);
  check(t, 'The cat sat on the mat.', 'the cat sat on the mat.', d);
});

/** [what, A, B, A rendered, B rendered]: `[op:text]` marks a changed span, `moveN` its pair. */
const CASES: ReadonlyArray<readonly [string, string, string, string, string]> = [
  [
    'substitutions are deleted on the first side and inserted on the second',
    'A gentle answer turns away wrath, but a harsh word stirs up anger.',
    'A soft answer turneth away wrath: but grievous words stir up anger.',
    'A [delete:gentle] answer [delete:turns] away wrath [delete:,] but [delete:a harsh word stirs] up anger.',
    'A [insert:soft] answer [insert:turneth] away wrath [insert::] but [insert:grievous words stir] up anger.',
  ],
  [
    'a passive rewrite: two crossing moves and the inserted function words',
    'The dog chased the cat.',
    'The cat was chased by the dog.',
    'The [move0:dog] chased the [move1:cat] .',
    'The [move1:cat] [insert:was] chased [insert:by] the [move0:dog] .',
  ],
  [
    'offsets are UTF-16 offsets into the text as given (not normalized)',
    '  Ça  va, 👍🏽 bien.',
    'Ça va très bien.',
    'Ça  va [delete:, 👍🏽] bien.',
    'Ça va [insert:très] bien.',
  ],
];

for (const [what, a, b, wantA, wantB] of CASES) {
  t.test(what, async (t) => {
    const d = pairDiff(a, b);
    check(t, a, b, d);
    t.equal(render(d.a), wantA);
    t.equal(render(d.b), wantB);
  });
}

t.test('a phrase at another place is a move, linked on both sides', async (t) => {
  const a = 'On Monday the board met in Paris.';
  const b = 'The board met in Paris on Monday.';
  const d = pairDiff(a, b);
  check(t, a, b, d);
  t.same(
    d.a.find((s) => s.op === 'move'),
    { op: 'move', start: 0, end: 9, text: 'On Monday', move: 0 },
  );
  t.same(
    d.b.find((s) => s.op === 'move'),
    { op: 'move', start: 23, end: 32, text: 'on Monday', move: 0 },
  );
  t.equal(render(d.a), '[move0:On Monday] the board met in Paris.');
});

t.test('shuffled stop words alone are not moves', async (t) => {
  const a = 'of the people, by the people';
  const b = 'people people of by the the';
  const d = pairDiff(a, b);
  check(t, a, b, d);
  for (const s of [...d.a, ...d.b]) {
    if (s.op === 'move') t.ok(/people/i.test(s.text), `a move holds a content word: ${s.text}`);
  }
});

t.test('nothing in common; empty sides', async (t) => {
  t.same(pairDiff('alpha beta', 'gamma'), {
    a: [{ op: 'delete', start: 0, end: 10, text: 'alpha beta' }],
    b: [{ op: 'insert', start: 0, end: 5, text: 'gamma' }],
  });
  t.same(pairDiff('', 'gamma').a, []);
  t.same(pairDiff('', '').b, []);
});

t.test('very long texts stay bounded: the tail beyond the token cap is one block', async (t) => {
  const long = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ');
  const started = performance.now();
  const d = pairDiff(long, `${long} end`);
  t.ok(performance.now() - started < 60_000, 'finishes');
  check(t, long, `${long} end`, d);
});

import t from 'tap';
import { ParamineError } from '../../src/errors.js';
import { CharNgramTfidf, charNgramCosine, charNgramCounts } from '../../src/text/index.js';

// Numbers marked "sklearn" were computed with scikit-learn 1.9.1:
//   v = TfidfVectorizer(analyzer=A, ngram_range=(2, 4), use_idf=U); M = v.fit_transform([a, b])
//   float(M[0].multiply(M[1]).sum())
// with A in {'char_wb', 'char'}, U=False for idf 'none' and U=True for idf 'pair'. During
// development all four variants, and corpus-fitted models (plain and sublinear tf), matched
// sklearn to < 1e-13 on 2,278 real pairs (MultiPIT, ParaSCI, Turku dev).

const close = (
  t: { ok: (v: boolean, msg: string) => unknown },
  got: number,
  want: number,
  msg = '',
): void => {
  t.ok(Math.abs(got - want) < 1e-12, `${msg} got ${got}, want ${want}`);
};

t.test(
  'n-gram extraction: char_wb pads words, char spans the text, code points not UTF-16 units',
  async (t) => {
    // " abc " → n=2: " a" ab bc "c "; n=3: " ab" abc "bc "; n=4: " abc" "abc "
    t.same(
      [...charNgramCounts('abc').keys()].sort(),
      [' a', ' ab', ' abc', 'ab', 'abc', 'abc ', 'bc', 'bc ', 'c '].sort(),
    );
    // a padded word of length n contributes itself once and stops: " a " → " a", "a ", " a "
    t.same(Object.fromEntries(charNgramCounts('a')), { ' a': 1, 'a ': 1, ' a ': 1 });
    t.same(Object.fromEntries(charNgramCounts('😀')), { ' 😀': 1, '😀 ': 1, ' 😀 ': 1 });
    // 'char': no padding; "ab ab" → ab×2, "b ", " a", "ab ", "b a", " ab", "ab a", "b ab"
    t.same(Object.fromEntries(charNgramCounts('ab ab', { analyzer: 'char' })), {
      ab: 2,
      'b ': 1,
      ' a': 1,
      'ab ': 1,
      'b a': 1,
      ' ab': 1,
      'ab a': 1,
      'b ab': 1,
    });
    t.same(Object.fromEntries(charNgramCounts('😀😀', { analyzer: 'char' })), { '😀😀': 1 });
    t.equal(charNgramCounts('').size, 0);
    t.equal(charNgramCounts('x', { analyzer: 'char' }).size, 0); // shorter than 2
    // lower-cased, and NFD input gives the NFC grams
    t.same(charNgramCounts('ÄB'), charNgramCounts('a\u0308b'));
    t.throws(() => charNgramCounts('x', { minN: 3, maxN: 2 }), ParamineError);
  },
);

t.test('pair cosine, hand-computed and equal to sklearn', async (t) => {
  // "abc" vs "abd", char_wb: 9 grams each (above), shared " a", "ab", " ab".
  // idf none: cos = 3 / (√9 · √9) = 1/3                                    (sklearn 0.3333333333333333)
  close(t, charNgramCosine('abc', 'abd'), 1 / 3);
  // idf pair (N = 2): shared grams idf ln(3/3)+1 = 1, own grams w = ln(3/2)+1;
  // cos = 3 / (3 + 6w²) = 0.20199309249791833                            (sklearn 0.20199309249791833)
  const w = Math.log(1.5) + 1;
  close(t, charNgramCosine('abc', 'abd', { idf: 'pair' }), 3 / (3 + 6 * w * w));
  // char: {ab, bc, abc} vs {ab, bd, abd}: 1 / 3                             (sklearn 0.3333333333333334)
  close(t, charNgramCosine('abc', 'abd', { analyzer: 'char' }), 1 / 3);
  close(t, charNgramCosine('ABC', 'abc'), 1); // lower-cased
  close(t, charNgramCosine('Hyvää päivää', 'Hyva\u0308a\u0308 pa\u0308iva\u0308a\u0308'), 1); // NFC = NFD
  t.equal(charNgramCosine('abc', 'xyz'), 0);
});

t.test('pair cosine on real scripts and emoji, sklearn reference values', async (t) => {
  // [a, b, char_wb/none, char_wb/pair, char/none, char/pair] — all from sklearn
  const cases: Array<[string, string, number, number, number, number]> = [
    [
      'Hyvää päivää',
      'hyvää päivää!',
      0.8970852271450606,
      0.8404431363411843,
      0.9607689228305226,
      0.9266368211041913,
    ],
    ['我爱你', '我爱她', 0.3333333333333333, 0.20199309249791833, 0.3333333333333334, 0.20199309249791833],
    [
      'Кошка сидит на ковре',
      'Кошка сидела на ковре',
      0.8333076524034718,
      0.7210746252623788,
      0.7817548103813475,
      0.6482614971292331,
    ],
    [
      'I love it 😀😀',
      'I love it 😀',
      0.9104463009115373,
      0.8391698842077986,
      0.9486832980505139,
      0.9055499650942063,
    ],
    [
      'مرحبا بالعالم',
      'مرحبا يا عالم',
      0.7216053531635458,
      0.5850828353533786,
      0.5835585150955648,
      0.42713907528786593,
    ],
  ];
  for (const [a, b, wbNone, wbPair, chNone, chPair] of cases) {
    close(t, charNgramCosine(a, b), wbNone, `${a} | ${b} char_wb none`);
    close(t, charNgramCosine(a, b, { idf: 'pair' }), wbPair, 'char_wb pair');
    close(t, charNgramCosine(a, b, { analyzer: 'char' }), chNone, 'char none');
    close(t, charNgramCosine(a, b, { analyzer: 'char', idf: 'pair' }), chPair, 'char pair');
    close(t, charNgramCosine(b, a), wbNone, 'symmetric');
  }
});

t.test('empty strings and one-word strings', async (t) => {
  t.equal(charNgramCosine('', ''), 0); // empty vectors: cosine 0, as sklearn
  t.equal(charNgramCosine('', 'abc'), 0);
  t.equal(charNgramCosine('!', '?'), 0); // " ! " vs " ? " share nothing
  close(t, charNgramCosine('word', 'word'), 1);
  close(t, charNgramCosine('a', 'a', { analyzer: 'char' }), 0); // "a" has no 2-gram: empty → 0
});

/** Cosine straight from charNgramCounts (string n-grams), uniform idf: the slow reference path. */
function countsCosine(a: string, b: string, maxN: number): number {
  const ca = charNgramCounts(a, { maxN });
  const cb = charNgramCounts(b, { maxN });
  let dot = 0;
  for (const [g, x] of ca) dot += x * (cb.get(g) ?? 0);
  const norm = (m: Map<string, number>): number => Math.sqrt([...m.values()].reduce((s, x) => s + x * x, 0));
  return dot / (norm(ca) * norm(cb));
}

t.test('fast numeric-key path and string fallback agree with string n-gram counts', async (t) => {
  const fi = 'Äiti sanoi, että huomenna sataa lunta ja tuulee kovasti; ota pipo mukaan! 😀 ';
  const fi2 = 'Huomenna sataa lunta, sanoi äiti — ja tuulee! Muista pipo. 👍🏽';
  // numeric keys (few distinct code points, maxN 4), reusing the grown scratch buffers
  close(t, charNgramCosine(fi.repeat(40), fi2.repeat(30)), countsCosine(fi.repeat(40), fi2.repeat(30), 4));
  close(t, charNgramCosine(fi, fi2), countsCosine(fi, fi2, 4));
  // maxN 12: (≈ 40 distinct code points + 1)^12 > 2^53, so the string-keyed path runs
  close(t, charNgramCosine(fi, fi2, { maxN: 12 }), countsCosine(fi, fi2, 12));
  // 'char' 12-grams of two 33-character texts that differ at positions 11 and 13 ("1 2" ↔ "2 1"):
  // 22 grams each, the 14 starting at 0..13 cover a difference, 8 are shared → cosine 8/22.
  // 33 distinct code points (no lower-casing, so A–K stay apart from the tail): 34^12 > 2^53, so
  // string keys. Numeric keys would be rounded doubles there, and "ABCDEFGHIJK1" / "ABCDEFGHIJK2"
  // (ids 13 and 14, last place) would merge → 9/22.
  const tail = 'bcdefghijklmnopqrst';
  const twelve = { analyzer: 'char', minN: 12, maxN: 12, lowercase: false } as const;
  close(t, charNgramCosine(`ABCDEFGHIJK1 2${tail}`, `ABCDEFGHIJK2 1${tail}`, twelve), 8 / 22);
  // > 9,740 distinct code points: base^4 > 2^53 even for maxN 4
  const han = Array.from({ length: 10_000 }, (_, i) => String.fromCodePoint(0x4e00 + i)).join('');
  close(t, charNgramCosine(han, han.slice(0, 5000)), countsCosine(han, han.slice(0, 5000), 4));
  close(t, charNgramCosine('abc', 'abd'), 1 / 3); // and back to the small case
});

t.test('CharNgramTfidf fitted on a corpus, hand-computed and equal to sklearn', async (t) => {
  const m = new CharNgramTfidf().fit(['abc', 'abd', 'xyz']);
  t.equal(m.documentCount, 3);
  t.equal(m.vocabularySize, 24); // abc: 9, abd: 9 − 3 shared (" a", "ab", " ab") = 6 new, xyz: 9 → 24
  // idf = ln((1 + N) / (1 + df)) + 1, N = 3
  close(t, m.idf(' a') ?? Number.NaN, Math.log(4 / 3) + 1); // df 2: 1.2876820724517808 (sklearn)
  close(t, m.idf('bc') ?? Number.NaN, Math.log(4 / 2) + 1); // df 1: 1.6931471805599454 (sklearn)
  t.equal(m.idf('qq'), undefined);
  // abc vs abd: 3 shared grams at i1 = ln(4/3)+1, 6 own grams at i2 = ln 2 + 1 on each side:
  // cos = 3·i1² / (3·i1² + 6·i2²) = 0.22432499897493308                 (sklearn 0.22432499897493308)
  const i1 = Math.log(4 / 3) + 1;
  const i2 = Math.log(2) + 1;
  close(t, m.similarity('abc', 'abd'), (3 * i1 * i1) / (3 * i1 * i1 + 6 * i2 * i2));
  // abz: out-of-vocabulary grams dropped; in vocabulary " a", "ab", " ab" (i1) and "z " (from xyz, i2):
  // cos = 3·i1² / (√(3·i1² + i2²) · √(3·i1² + 6·i2²)) = 0.37724108740001816 (sklearn)
  close(
    t,
    m.similarity('abc', 'abz'),
    (3 * i1 * i1) / Math.sqrt((3 * i1 * i1 + i2 * i2) * (3 * i1 * i1 + 6 * i2 * i2)),
  );
  t.equal(m.similarity('abc', 'xyz'), 0);
  t.equal(m.similarity('abc', 'qqq'), 0); // all out of vocabulary
  // a vector is L2-normalized
  let ss = 0;
  for (const x of m.vector('abc abd').values()) ss += x * x;
  close(t, ss, 1);
});

t.test('CharNgramTfidf: sublinear tf (sklearn), incremental fit and JSON round trip', async (t) => {
  const corpus = ['abab cd', 'abab', 'cd ef'];
  const sub = new CharNgramTfidf({ sublinearTf: true }).fit(corpus);
  // sklearn: TfidfVectorizer(analyzer='char_wb', ngram_range=(2, 4), sublinear_tf=True)
  close(t, sub.similarity('abab abab cd', 'ab cd'), 0.7194244555393251);
  const plain = new CharNgramTfidf().fit(corpus);
  t.not(plain.similarity('abab abab cd', 'ab cd'), sub.similarity('abab abab cd', 'ab cd'));

  const inc = new CharNgramTfidf({ sublinearTf: true });
  for (const doc of corpus) inc.addDocument(doc);
  t.equal(inc.similarity('abab abab cd', 'ab cd'), sub.similarity('abab abab cd', 'ab cd'));

  const back = CharNgramTfidf.fromJSON(JSON.parse(JSON.stringify(sub.toJSON())));
  t.equal(back.documentCount, 3);
  t.equal(back.vocabularySize, sub.vocabularySize);
  t.equal(back.similarity('abab abab cd', 'ab cd'), sub.similarity('abab abab cd', 'ab cd'));
  t.same(back.options, sub.options);
});

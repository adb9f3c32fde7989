import t from 'tap';
import { charLength, normalize } from '../../src/text/index.js';

t.test('normalize: whitespace of every kind collapses to one space, ends trimmed', async (t) => {
  t.equal(normalize(''), '');
  t.equal(normalize('   '), '');
  t.equal(normalize('Hello world'), 'Hello world'); // ASCII fast path: returned as is
  t.equal(normalize('  Hello \t\n world  '), 'Hello world');
  // NBSP, en quad, ideographic space, line separator, NEL (U+0085), narrow NBSP
  t.equal(normalize('a\u00A0b\u2000c\u3000d\u2028e\u0085f\u202Fg'), 'a b c d e f g');
  t.equal(normalize('\r\n x \r\n'), 'x');
});

t.test('normalize: controls and invisible format characters are removed, not spaced', async (t) => {
  t.equal(normalize('a\u0000b\u0007c\u007Fd\u009Fe'), 'abcde');
  t.equal(normalize('foo\u200Bbar'), 'foobar'); // zero-width space inside a word
  t.equal(normalize('\uFEFFbom'), 'bom');
  t.equal(normalize('soft\u00ADhyphen'), 'softhyphen');
  t.equal(normalize('\u200Eleft\u200F \u202Aembedded\u202C'), 'left embedded');
  // removal happens before whitespace collapse: no double space left behind
  t.equal(normalize('a \u200B b'), 'a b');
  // ZWNJ (Persian spelling) and ZWJ (emoji sequences) are kept
  t.equal(normalize('می\u200Cخواهم'), 'می\u200Cخواهم');
  t.equal(normalize('👨\u200D👩\u200D👧'), '👨\u200D👩\u200D👧');
  // a lone surrogate becomes U+FFFD; a valid pair is untouched
  t.equal(normalize('a\uD800b'), 'a\uFFFDb');
  t.equal(normalize('x 😀'), 'x 😀');
});

t.test('normalize: NFC, and NFD input gives the same string', async (t) => {
  const nfd = 'Ha\u0308meenlinna ja Jyva\u0308skyla\u0308'; // ä as a + U+0308
  const nfc = 'Hämeenlinna ja Jyväskylä';
  t.not(nfd, nfc);
  t.equal(normalize(nfd), nfc);
  t.equal(normalize(nfd).length, nfc.length);
  // a removed zero-width character between base and mark does not block composition
  t.equal(normalize('a\u200B\u0308'), 'ä');
  // compatibility forms are NOT folded here (that is the dedup key's job)
  t.equal(normalize('ＡＢＣ ﬁ'), 'ＡＢＣ ﬁ');
  t.equal(normalize('Case, Punct!'), 'Case, Punct!');
});

t.test('normalize is idempotent', async (t) => {
  for (const s of ['  a\u00A0\u200Bb  ', 'Ha\u0308me', '我 爱\u3000你', 'x\u0000\ty', '']) {
    t.equal(normalize(normalize(s)), normalize(s), JSON.stringify(s));
  }
});

t.test('charLength counts code points of the normalized text', async (t) => {
  t.equal(charLength(''), 0);
  t.equal(charLength('  hello  '), 5);
  t.equal(charLength('Jyva\u0308skyla\u0308'), 9); // NFC: J y v ä s k y l ä = 9 (11 in NFD)
  t.equal(charLength('我爱你'), 3);
  t.equal(charLength('😀'), 1); // one code point, two UTF-16 units
  t.equal(charLength('👍🏽'), 2); // thumbs up + skin-tone modifier: 2 code points (Python len)
  t.equal(charLength('مرحبا'), 5);
  t.equal(charLength('ok\u200Bok'), 4); // ZWSP removed
});

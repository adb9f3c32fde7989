import t from 'tap';
import { dedupKey } from '../../src/text/index.js';

t.test('case, punctuation and spacing do not change the key', async (t) => {
  const key = 'hello world';
  for (const s of ['Hello, World!', 'hello world', '  HELLO   world...', 'Hello,world', '"Hello" — world?']) {
    t.equal(dedupKey(s), key, JSON.stringify(s));
  }
  t.equal(dedupKey("don't"), 'dont');
  t.equal(dedupKey('DON’T'), 'dont');
  t.equal(dedupKey('dont'), 'dont');
  t.equal(dedupKey('state-of-the-art'), 'state of the art');
  t.equal(dedupKey('$5 + 3€ = 8'), '5 3 8'); // symbols (\p{S}) separate like punctuation
});

t.test('different words give different keys', async (t) => {
  t.not(dedupKey('the cat sat'), dedupKey('the cat sits'));
  t.not(dedupKey('great 😀'), dedupKey('great 😢')); // emoji are kept
  t.not(dedupKey('a b'), dedupKey('ab'));
});

t.test('empty and punctuation-only strings have the empty key; one word', async (t) => {
  t.equal(dedupKey(''), '');
  t.equal(dedupKey('   '), '');
  t.equal(dedupKey('!!! ... ?'), '');
  t.equal(dedupKey('Word.'), 'word');
});

t.test('NFC and NFD inputs produce the same key; compatibility forms fold', async (t) => {
  const nfc = 'Hyvää päivää, Jyväskylä!';
  const nfd = nfc.normalize('NFD');
  t.not(nfc, nfd);
  t.equal(dedupKey(nfd), dedupKey(nfc));
  t.equal(dedupKey(nfc), 'hyvää päivää jyväskylä');
  t.equal(dedupKey('Café'), dedupKey('Cafe\u0301'));
  t.equal(dedupKey('ＡＢＣ ﬁle x²'), 'abc file x2'); // NFKC: full-width, ligature, superscript
});

t.test('non-Latin scripts keep their letters; case folds beyond ASCII', async (t) => {
  t.equal(dedupKey('Привет, МИР!'), 'привет мир');
  t.equal(dedupKey('مرحبا، بالعالم!'), 'مرحبا بالعالم'); // Arabic comma U+060C is punctuation
  t.equal(dedupKey('我爱你。'), '我 爱 你'); // Han: one token per character
  t.equal(dedupKey('我 爱 你'), '我 爱 你');
  t.equal(dedupKey('STRASSE'), dedupKey('Straße')); // ß → ss
  t.equal(dedupKey('ΟΔΟΣ'), dedupKey('οδοσ')); // final sigma ς → σ
  t.equal(dedupKey('ÄITI'), 'äiti');
});

t.test('emoji: variation selectors, skin tones and spacing are ignored', async (t) => {
  t.equal(dedupKey('great😀'), 'great 😀');
  t.equal(dedupKey('great 😀!!'), 'great 😀');
  t.equal(dedupKey('❤️'), dedupKey('❤'));
  t.equal(dedupKey('👍🏽'), '👍');
  t.equal(dedupKey('🇫🇮'), '🇫🇮');
});

t.test('invisible characters and idempotence', async (t) => {
  t.equal(dedupKey('foo\u200Bbar'), 'foobar');
  t.equal(dedupKey('می\u200Cخواهم'), dedupKey('میخواهم'));
  for (const s of ['Hello, World!', 'ΟΔΟΣ Straße', '我爱你。', 'great👍🏽', 'İstanbul', '']) {
    t.equal(dedupKey(dedupKey(s)), dedupKey(s), JSON.stringify(s));
  }
});

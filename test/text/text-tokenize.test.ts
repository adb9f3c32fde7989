import t from 'tap';
import { tokenCount, tokenize, wordCount } from '../../src/text/index.js';

t.test('empty and one-word strings', async (t) => {
  t.same(tokenize(''), []);
  t.equal(tokenCount(''), 0);
  t.equal(wordCount('  \t '), 0);
  t.same(tokenize('hello'), ['hello']);
  t.equal(tokenCount('hello'), 1);
  t.same(tokenize('!!!'), ['!', '!', '!']);
  t.equal(wordCount('!!!'), 0);
});

t.test('punctuation is split off as separate tokens; words keep internal connectors', async (t) => {
  t.same(tokenize('Hello, world!'), ['Hello', ',', 'world', '!']); // 4 tokens, 2 words
  t.equal(tokenCount('Hello, world!'), 4);
  t.equal(wordCount('Hello, world!'), 2);
  t.same(tokenize("don't stop state-of-the-art"), ["don't", 'stop', 'state-of-the-art']);
  t.same(tokenize('don’t'), ['don’t']); // typographic apostrophe
  t.same(tokenize('pi is 3.14, not 1,000.'), ['pi', 'is', '3.14', ',', 'not', '1,000', '.']);
  // a connector only joins word parts on both sides
  t.same(tokenize("'quoted' - x- -y"), ["'", 'quoted', "'", '-', 'x', '-', '-', 'y']);
  t.same(tokenize('end. Next'), ['end', '.', 'Next']);
  t.same(tokenize('e.g. x,y 2.b'), ['e', '.', 'g', '.', 'x', ',', 'y', '2', '.', 'b']); // . , join digits only
  t.same(tokenize('under_score'), ['under', '_', 'score']);
});

t.test('non-Latin scripts', async (t) => {
  // Finnish with diacritics, NFD input gives NFC tokens
  t.same(tokenize('Hyva\u0308a\u0308 pa\u0308iva\u0308a\u0308, äiti!'), [
    'Hyvää',
    'päivää',
    ',',
    'äiti',
    '!',
  ]);
  t.same(tokenize('Привет, мир'), ['Привет', ',', 'мир']);
  t.same(tokenize('مرحبا بالعالم!'), ['مرحبا', 'بالعالم', '!']);
  // Han / kana: one token per character; the ideographic full stop is punctuation
  t.same(tokenize('我爱你。'), ['我', '爱', '你', '。']);
  t.equal(tokenCount('東京タワー'), 5); // 東 京 タ ワ ー
  t.equal(wordCount('我爱你。'), 3);
  // Korean uses spaces: words
  t.same(tokenize('안녕하세요 세계'), ['안녕하세요', '세계']);
  // ZWNJ stays inside a Persian word
  t.same(tokenize('می\u200Cخواهم'), ['می\u200Cخواهم']);
});

t.test('emoji are one token each, with modifiers, ZWJ sequences and flags', async (t) => {
  t.same(tokenize('great👍🏽'), ['great', '👍🏽']);
  t.same(tokenize('👨\u200D👩\u200D👧 🇫🇮🇸🇪'), ['👨\u200D👩\u200D👧', '🇫🇮', '🇸🇪']);
  t.same(tokenize('❤️❤️'), ['❤️', '❤️']); // U+2764 U+FE0F twice
  t.same(tokenize('1️⃣ #️⃣'), ['1️⃣', '#️⃣']); // keycaps: the marks stay on their base
  t.equal(wordCount('so happy 😀!'), 3); // so, happy, 😀 (not "!")
  t.equal(tokenCount('so happy 😀!'), 4);
});

t.test('invisible characters do not split or add tokens', async (t) => {
  t.same(tokenize('foo\u200Bbar baz'), ['foobar', 'baz']);
  t.same(tokenize('a\u0000b\u00A0c'), ['ab', 'c']);
  t.same(tokenize('\uE000'), []); // private use: skipped
});

t.test('repeated calls do not leak regex state', async (t) => {
  t.equal(tokenCount('a b c'), 3);
  t.same(tokenize('x y'), ['x', 'y']);
  t.equal(tokenCount('a b c'), 3);
  t.equal(wordCount('a, b'), 2);
  t.equal(wordCount('a, b'), 2);
});

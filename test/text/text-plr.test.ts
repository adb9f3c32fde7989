import t from 'tap';
import { lengthRatio, lengthRatioOfLengths, plr, plrOfLengths } from '../../src/text/index.js';

t.test('plr = |a − b| / min(a, b) in tokens; lengthRatio = max / min', async (t) => {
  t.equal(plr('a b c', 'a b c d e f'), 1); // 3 vs 6 tokens: |3 − 6| / 3 = 1
  t.equal(lengthRatio('a b c', 'a b c d e f'), 2); // 6 / 3
  t.equal(plr('a b c d e f', 'a b c'), 1); // symmetric
  t.equal(plr('Hello, world!', 'Hi there!'), 1 / 3); // 4 tokens (Hello , world !) vs 3: 1/3
  t.equal(lengthRatio('Hello, world!', 'Hi there!'), 4 / 3);
  t.equal(plr('same length', 'two words'), 0);
  t.equal(lengthRatio('same length', 'two words'), 1);
  t.equal(plr('我爱你', '我 爱 你 们'), 1 / 3); // Han per character: 3 vs 4
  t.equal(plr('one', 'two'), 0); // one-word strings
});

t.test('empty sides: both empty → 0 / 1, one empty → Infinity', async (t) => {
  t.equal(plr('', ''), 0);
  t.equal(lengthRatio('', ''), 1);
  t.equal(plr('', 'word'), Number.POSITIVE_INFINITY);
  t.equal(plr('word', '  '), Number.POSITIVE_INFINITY);
  t.equal(lengthRatio('word', ''), Number.POSITIVE_INFINITY);
  t.notOk(plr('', 'word') < 1, 'an empty side fails a PLR < 1 filter');
});

t.test('OfLengths forms', async (t) => {
  t.equal(plrOfLengths(10, 15), 0.5);
  t.equal(plrOfLengths(15, 10), 0.5);
  t.equal(lengthRatioOfLengths(4, 10), 2.5);
  t.equal(plrOfLengths(0, 0), 0);
  t.equal(plrOfLengths(0, 3), Number.POSITIVE_INFINITY);
  t.equal(lengthRatioOfLengths(3, 0), Number.POSITIVE_INFINITY);
});

import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  BOS,
  countTokens,
  EOS,
  KneserNeyBuilder,
  type KneserNeyLM,
  LmVocabulary,
  lmTokens,
  UNK,
} from '../../src/text/kneser-ney.js';
import { loadLm, saveLm } from '../../src/text/kneser-ney-file.js';

const dir = new URL('../fixtures/kneser-ney/', import.meta.url);
const lines = (name: string) =>
  readFileSync(new URL(name, dir), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
const train = lines('train.txt');
const test = lines('test.txt');
/** Numbers from reference.py, an independent Python implementation (see its docstring). */
const expected = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8')) as Record<
  string,
  {
    order: number;
    minCount: number;
    vocabulary: number;
    discounts: number[][];
    sentenceLog2: number[];
    perplexity: number;
    probabilities: Record<string, number>;
  }
>;

function trainLm(texts: readonly string[], order: number, minCount = 1): KneserNeyLM {
  const vocab = LmVocabulary.fromCounts(countTokens(texts), minCount);
  const b = new KneserNeyBuilder(vocab, order);
  for (const s of texts) b.addText(s);
  return b.build();
}

function contextSum(lm: KneserNeyLM, context: string[]): number {
  let s = 0;
  for (const w of lm.vocabulary.words) if (w !== BOS) s += lm.probability(context, w);
  return s;
}

for (const [name, ref] of Object.entries(expected)) {
  t.test(`matches the Python reference (${name})`, async (t) => {
    const lm = trainLm(train, ref.order, ref.minCount);
    t.equal(lm.vocabulary.size, ref.vocabulary);
    lm.info.discounts.forEach((d, k) => {
      d.forEach((x, i) => {
        t.ok(Math.abs(x - ref.discounts[k]![i]!) < 1e-9, `D${i + 1} at order ${k + 1}`);
      });
    });
    test.forEach((s, i) => {
      const got = lm.sentenceLog2(lmTokens(s)).log2;
      t.ok(Math.abs(got - ref.sentenceLog2[i]!) < 1e-4, `log2 p("${s}") ${got} vs ${ref.sentenceLog2[i]}`);
    });
    const ppl = lm.perplexity(test.map(lmTokens));
    t.ok(Math.abs(ppl / ref.perplexity - 1) < 1e-5, `perplexity ${ppl} vs ${ref.perplexity}`);
    t.ok(Math.abs(lm.probability([BOS, 'the'], 'model') - ref.probabilities['the model | <s>']!) < 1e-6);
    t.ok(Math.abs(lm.probability(['the', 'mat'], EOS) - ref.probabilities['</s> | the mat']!) < 1e-6);
    t.ok(Math.abs(lm.probability(['on', 'the'], 'zebra') - ref.probabilities['zebra | on the']!) < 1e-6);
  });
}

t.test('p(· | context) sums to 1 over the vocabulary plus <unk>', async (t) => {
  for (const order of [1, 2, 3, 5]) {
    const lm = trainLm(train, order, 2);
    t.ok(lm.vocabulary.words.includes(UNK));
    for (const ctx of [[BOS], [BOS, 'the'], ['the', 'model', 'is'], ['on', 'the'], ['zebra', 'qq'], []]) {
      const s = contextSum(lm, ctx);
      t.ok(Math.abs(s - 1) < 1e-5, `order ${order}, context [${ctx.join(' ')}]: ${s}`);
    }
  }
});

t.test('a hand-computed bigram model', async (t) => {
  // Corpus "a b" and "a a": bigram counts (raw at the top order) <s> a: 2, a b: 1, b </s>: 1, a a: 1,
  // a </s>: 1. Unigram continuation counts: a 2 (<s>, a), b 1, </s> 2 (b, a). Count-of-counts are
  // incomplete, so both orders use D = (0.5, 1, 1.5).
  const lm = trainLm(['a b', 'a a'], 2);
  // Unigrams: total 5; a: (2 − 1)/5, b: (1 − 0.5)/5, </s>: 1/5; γ = (0.5·1 + 1·2)/5 = 0.5; V = {a, b, </s>, <unk>}.
  const uni = { a: 0.2 + 0.5 / 4, b: 0.1 + 0.5 / 4, [EOS]: 0.2 + 0.5 / 4, [UNK]: 0.5 / 4 };
  // Context "a": a b 1, a a 1, a </s> 1; total 3, γ = 0.5·3/3 = 0.5.
  t.ok(Math.abs(lm.probability(['a'], 'b') - (0.5 / 3 + 0.5 * uni.b)) < 1e-7);
  t.ok(Math.abs(lm.probability(['a'], UNK) - 0.5 * uni[UNK]) < 1e-7);
  // Context <s>: <s> a 2 (raw, after <s>); total 2, γ = 1·1/2; p(a | <s>) = (2 − 1)/2 + 0.5·p(a).
  t.ok(Math.abs(lm.probability([BOS], 'a') - (0.5 + 0.5 * uni.a)) < 1e-7);
  t.ok(Math.abs(lm.probability(['zzz'], 'b') - uni.b) < 1e-7, 'an unknown context backs off to the unigram');
});

t.test('save and load give the same probabilities', async (t) => {
  const lm = trainLm(train, 4);
  const tmp = await mkdtemp(join(tmpdir(), 'kn-'));
  t.teardown(() => rm(tmp, { recursive: true, force: true }));
  await saveLm(join(tmp, 'lm.bin'), lm);
  const again = await loadLm(join(tmp, 'lm.bin'));
  for (const s of test) t.equal(again.crossEntropy(lmTokens(s)), lm.crossEntropy(lmTokens(s)));
  t.same(again.info, lm.info);
});

t.test('Moore–Lewis: σ = H_in − H_gen orders in-domain text below out-of-domain text', async (t) => {
  const science = [
    'we propose a neural model for machine translation',
    'our model outperforms the baseline on three benchmarks',
    'the encoder maps each sentence to a vector',
    'we evaluate the model on two translation tasks',
    'results show that attention improves the translation quality',
    'the decoder generates the target sentence from the vector',
  ];
  const general = [
    'the cat sat on the mat all afternoon',
    'we went to the beach on sunday',
    'my brother cooked dinner for the family',
    'the weather was nice so we walked to the park',
    'she bought a new dress for the party',
    'the dog barked at the mailman again',
  ];
  const vocab = LmVocabulary.fromCounts(countTokens([...science, ...general]));
  const fit = (texts: string[]) => {
    const b = new KneserNeyBuilder(vocab, 3);
    for (const s of texts) b.addText(s);
    return b.build();
  };
  const inLm = fit(science);
  const genLm = fit(general);
  const sigma = (s: string) => inLm.crossEntropy(lmTokens(s)) - genLm.crossEntropy(lmTokens(s));
  const inside = sigma('we evaluate the neural model on translation benchmarks');
  const outside = sigma('we walked the dog to the park on sunday');
  t.ok(inside < 0, `in-domain σ ${inside} < 0`);
  t.ok(outside > 0, `out-of-domain σ ${outside} > 0`);
});

/** The definition tagger finds the defined term in ParaSCI's definition patterns, and nothing elsewhere. */
import t from 'tap';
import { definitionOf } from '../../src/text/definitions.js';

const cases: Array<[string, string, string]> = [
  [
    'In this paper, coherence is defined as the degree to which sentences relate.',
    'coherence',
    'is-defined-as',
  ],
  [
    'Paraphrase identification refers to the task of deciding whether two sentences mean the same.',
    'paraphrase identification',
    'refers-to',
  ],
  ['We define the attention weight as the softmax of the scores.', 'attention weight', 'define-as'],
  ['This technique is called back-translation.', 'back-translation', 'is-called'],
  [
    'Bilingual Evaluation Understudy (BLEU) is defined as the geometric mean of n-gram precisions.',
    'bilingual evaluation understudy',
    'is-defined-as',
  ],
  [
    'The process of mapping words to vectors is known as word embedding in the literature.',
    'word embedding',
    'is-called',
  ],
  ['A named entity is formally defined as a real-world object.', 'named entity', 'is-defined-as'],
  [
    'The definition of perplexity is the exponentiated average negative log-likelihood.',
    'perplexity',
    'definition-of',
  ],
  ['This is referred to as "domain adaptation".', 'domain adaptation', 'is-called'],
  ['Here, recall refers to the share of gold pairs found.', 'recall', 'refers-to'],
  ['We formally define a paraphrase to be a pair with the same meaning.', 'paraphrase', 'define-as'],
];

t.test('the term of each definition pattern, with its offsets', async (t) => {
  for (const [sentence, term, pattern] of cases) {
    const m = definitionOf(sentence);
    t.ok(m, sentence);
    if (!m) continue;
    t.equal(m.term, term, sentence);
    t.equal(m.pattern, pattern, `${sentence}: pattern`);
    t.equal(sentence.slice(m.start, m.end).toLowerCase().replace(/"/g, ''), term, 'offsets cover the term');
  }
});

t.test('no term in sentences that define nothing, or whose subject is a pronoun', async (t) => {
  for (const s of [
    'We use BLEU to evaluate the systems.',
    'It is defined as the sum of the weights.',
    'This means that the model overfits.',
    'The results are shown in Table 2.',
    '',
  ]) {
    t.equal(definitionOf(s), undefined, s);
  }
});

t.test('differently cased mentions of one term share a key', async (t) => {
  const a = definitionOf('Word Embedding is defined as a dense vector.');
  const b = definitionOf('In NLP, a word embedding refers to a learned representation.');
  t.equal(a?.term, 'word embedding');
  t.equal(b?.term, 'word embedding');
});

/** Two kinds of deterministic sentences for domain tests: scientific prose (the domain) and everyday prose. */
import { syntheticSentence } from './corpus.js';

const METHOD = ['neural', 'probabilistic', 'graph-based', 'supervised', 'unsupervised', 'hierarchical'];
const MODEL = ['parser', 'classifier', 'language model', 'encoder', 'tagger', 'translation system'];
const TASK = [
  'machine translation',
  'summarization',
  'dependency parsing',
  'entity recognition',
  'retrieval',
];
const DATA = ['the Penn Treebank', 'three benchmarks', 'the WMT test set', 'a new corpus', 'two datasets'];
const TEMPLATES = [
  (a: string, b: string, c: string, d: string) => `We propose a ${a} ${b} for ${c} and evaluate it on ${d}.`,
  (a: string, b: string, c: string, d: string) => `Our ${a} ${b} outperforms the baseline for ${c} on ${d}.`,
  (a: string, b: string, c: string, d: string) => `Results on ${d} show that the ${a} ${b} improves ${c}.`,
  (a: string, b: string, c: string, d: string) =>
    `The ${b} is trained with ${a} features for ${c} using ${d}.`,
];

/** The i-th scientific sentence (deterministic, distinct for i < 4 · 6 · 6 · 5 · 5). */
export function scienceSentence(i: number): string {
  const t = TEMPLATES[i % TEMPLATES.length]!;
  const a = METHOD[Math.floor(i / 4) % METHOD.length]!;
  const b = MODEL[Math.floor(i / 24) % MODEL.length]!;
  const c = TASK[Math.floor(i / 144) % TASK.length]!;
  const d = DATA[(i * 7 + Math.floor(i / 720)) % DATA.length]!;
  return t(a, b, c, d);
}

/** `n` sentences, every `every`-th one scientific (ids are their positions when indexed in this order). */
export function mixedCorpus(n: number, every = 3): Array<{ text: string; science: boolean }> {
  return Array.from({ length: n }, (_, i) =>
    i % every === 0
      ? { text: scienceSentence(i * 13 + 5), science: true }
      : { text: syntheticSentence(i), science: false },
  );
}

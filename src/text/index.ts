/** Text stage: normalization, dedup keys, tokenization and the lexical pair measures. */

export type { BleuOptions } from './bleu.js';
export { bleuFromStats, ngramMatches, sentenceBleu, symmetricBleu, tokenize13a } from './bleu.js';
export type { CharAnalyzer, CharNgramOptions } from './charngrams.js';
export { charNgramCounts } from './charngrams.js';
export type { TextSpan } from './clauses.js';
export { bestSpan, clauseRuns, MAX_CLAUSES, splitClauses } from './clauses.js';
export { dedupKey } from './dedup.js';
export type { DefinitionMatch } from './definitions.js';
export { DEFINITION_TAGGER_VERSION, definitionOf, termKey } from './definitions.js';
export type { DiffOp, DiffSpan, PairDiff } from './diff.js';
export { pairDiff } from './diff.js';
export { DistinctTexts } from './distinct.js';
export {
  BOS,
  countTokens,
  discountsOf,
  EOS,
  KneserNeyBuilder,
  type KneserNeyInfo,
  KneserNeyLM,
  LmVocabulary,
  lmTokens,
  UNK,
} from './kneser-ney.js';
export { lmFromBuffer, lmToBuffer, loadLm, saveLm } from './kneser-ney-file.js';
export { charLength, normalize } from './normalize.js';
export { lengthRatio, lengthRatioOfLengths, plr, plrOfLengths } from './plr.js';
export type { SentenceTagger } from './taggers.js';
export { TAGGERS, taggerFor } from './taggers.js';
export type { CharNgramTfidfJSON, PairCosineOptions } from './tfidf.js';
export { CharNgramTfidf, charNgramCosine, dot } from './tfidf.js';
export { tokenCount, tokenize, tokenSpans, wordCount } from './tokenize.js';

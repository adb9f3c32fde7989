export type { PairScorer } from '../models/ports.js';
export { type CascadeParts, LabelCascade, openLabeler } from './cascade.js';
export { type BandChoice, type BandSet, chooseBand, inBand } from './cascade-band.js';
export {
  CrossEncoderCore,
  type CrossEncoderInfo,
  canonicalPair,
  type LabelCalibration,
  type Pair,
  type PairScore,
  softmax,
} from './core.js';
export { CrossEncoder, type CrossEncoderOptions } from './cross-encoder.js';
export { type SpanHit, SpanModel, type SpanModelOptions, type SpanQuery } from './span.js';
export { bestTokenSpan, splitWords } from './span-core.js';

export type { PairScorer } from '../models/ports.js';
export { CrossEncoderCore, type CrossEncoderInfo, type Pair, type PairScore, softmax } from './core.js';
export { CrossEncoder, type CrossEncoderOptions } from './cross-encoder.js';

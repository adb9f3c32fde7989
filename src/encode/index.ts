export type { Embedder } from '../models/ports.js';
export { type BertScore, bertScore, IdfWeights } from './bertscore.js';
export {
  EncoderCore,
  type EncoderCoreOptions,
  type EncoderInfo,
  l2normalize,
  poolRow,
  type TokenVectors,
} from './core.js';
export { Encoder, type EncoderOptions } from './encoder.js';

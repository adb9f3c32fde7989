export type { Embedder } from '../models/ports.js';
export { EncoderCore, type EncoderCoreOptions, type EncoderInfo, l2normalize, poolRow } from './core.js';
export { Encoder, type EncoderOptions } from './encoder.js';

/** What the routes get: the shared core, the store, limits and status callbacks. */
import type { SearchCore } from '../search/core.js';
import type { SentenceStore } from '../store/index.js';
import type { Metrics } from './metrics.js';

export interface Limits {
  maxTexts: number;
  maxTextChars: number;
  maxK: number;
  maxCandidates: number;
  maxPairs: number;
  /** Most (query, candidate) pairs one search request may send to the cross-encoder. */
  maxRerankPairs: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxTexts: 64,
  maxTextChars: 2000,
  maxK: 100,
  maxCandidates: 500,
  maxPairs: 256,
  maxRerankPairs: 2000,
};

export interface ServiceContext {
  core: SearchCore;
  store: SentenceStore;
  limits: Limits;
  metrics?: Metrics;
  /** Manifest and build facts of the open index. */
  indexInfo: () => Record<string, unknown>;
  /** Named readiness checks; all true means ready. */
  readiness: () => Record<string, boolean>;
}

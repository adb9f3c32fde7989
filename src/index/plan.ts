/** What chooseFactory decides and what the budget, training and filling steps read: the plan's shape, apart from the choosing. */
import type { IndexCost, IndexShape } from './cost.js';

export interface SearchDefaults {
  nprobe: number;
  kFactor: number;
  /** HNSW coarse quantizer only. */
  efSearch?: number;
  /** 'vectors': re-score k * kFactor candidates from vectors.f16 (exact cosine). */
  refine?: 'vectors';
}

export interface IndexPlan extends IndexShape {
  factory: string;
  /** Vectors to train on (0: no training needed). */
  trainSize: number;
  /** k-means of the coarse quantizer: one run, or two levels (sqrt(nlist) groups, then each group). */
  training: 'none' | 'kmeans' | 'two-level';
  search: SearchDefaults;
  cost: IndexCost;
  /** Why, one clause per decision. */
  reasons: string[];
  /** The RAM budget it was chosen under (`--max-ram`) and its expected RAM. */
  budget?: { maxRamBytes: number; ram: number };
  reason: string;
}

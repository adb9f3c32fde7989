/** What a mining job runs against (the served index and its parts), and the views of it a job reads. */
import type { Embedder } from '../encode/index.js';
import type { VectorFile } from '../index/index.js';
import type { AnnIndex, SearchCore } from '../search/core.js';
import { type GroupTables, type GroupView, type SentenceStore, withAdded } from '../store/index.js';
import type { AddedSentences, SourceParts } from './queries.js';
import type { JobSpec } from './spec.js';
import type { JobRecord } from './store.js';

/** What a job runs against: the served index and its parts. */
export interface JobContext {
  core: SearchCore;
  /** The encoder for query sentences that are not in the index (or when no embeddings were kept). */
  encoder: Embedder;
  /** The shards themselves, for margin scoring's neighbourhood means. */
  ann: AnnIndex;
  store: SentenceStore;
  vectors?: VectorFile | undefined;
  /** The index's group tables (withinGroup and window scopes read them), if it has any. */
  groups?: GroupTables | undefined;
  index: { name: string; identity: string; ntotal: number };
  /** Sentences added since the build (jobs query them too, and `since` mines only them). */
  added?: AddedSentences | undefined;
  /** The index with its writes (sealed and growing segments, tombstones): what `since` searches. */
  live?: AnnIndex | undefined;
  dataDir?: string | undefined;
}

export interface RunControl {
  /** Checked between batches: 'cancel' ends the job as cancelled, 'pause' leaves it to resume later. */
  stop(): 'cancel' | 'pause' | undefined;
  onBatch?(job: JobRecord): void;
}

/** What a job's sentences are read from: ids below the job's `untilId` (or the build's count). */
export function sourceParts(ctx: JobContext, spec?: Pick<JobSpec, 'untilId'>): SourceParts {
  return {
    store: ctx.store,
    encoder: ctx.encoder,
    vectors: ctx.vectors,
    ntotal: spec?.untilId ?? ctx.index.ntotal,
    added: ctx.added,
    dataDir: ctx.dataDir,
  };
}

/**
 * The group tables as a job sees them: with the sentences added before it was created (below its pinned
 * `ntotal`) in their groups, so scoped jobs mine them too.
 */
export function groupsOf(ctx: JobContext, ntotal: number): GroupView | undefined {
  const { groups, added } = ctx;
  if (groups === undefined || added === undefined || ntotal <= added.base) return groups;
  return withAdded(groups, added.sentences(added.base, ntotal));
}

/** The id the next added sentence gets: a new job's `untilId`. */
export function nextIdOf(ctx: JobContext): number {
  return ctx.added?.nextId ?? ctx.index.ntotal;
}

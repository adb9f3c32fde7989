/** What SentenceWrites (writes.ts) takes and answers: its parts and options, a write's items, its outcomes, the writes' stats. */
import type { Embedder } from '../encode/index.js';
import type { LiveIndex } from '../index/index.js';
import type { Meta, SentenceStore } from '../store/index.js';
import type { Drift } from './drift.js';

export interface AddItem {
  text: string;
  meta?: Meta | undefined;
  /** The client's id for this sentence (idempotent retries). */
  clientId?: string | undefined;
  /** A live sentence this one replaces: deleted in the same durable write. */
  replaces?: number | undefined;
}

/** Metadata a sentence must have to match: each key equal to the value, or to one of the values listed. */
export type MetaFilter = Record<string, string | number | boolean | ReadonlyArray<string | number | boolean>>;

export interface AddOutcome {
  id: number;
  /** added: new; duplicate: the same text is already in the index (id is that sentence); retried: this client id was added before. */
  status: 'added' | 'duplicate' | 'retried';
  clientId?: string;
}

export interface WriteStats {
  /** Sentences added since the build (deleted ones included), and ids deleted. */
  added: number;
  deleted: number;
  /** The next write's sequence number. */
  seq: number;
  /** Added sentences in the growing exact segment, and in sealed segments of the build's kind. */
  growing: number;
  sealed: { segments: number; sentences: number };
  /** How well the build's trained quantizers fit the sealed sentences against its own (null: not measured). */
  drift: Drift | null;
}

export interface SealOptions {
  /** Seal the growing segment once it holds this many sentences (default SEAL_AT). */
  sealAt?: number | undefined;
  /**
   * Take in, every FOLLOW_MS, the writes another process makes to the index (`paramine add` / `delete`
   * beside the service): its adds, deletes and seals become searchable without a restart. The composition
   * root also takes up a compaction run beside it then (generation.ts).
   */
  follow?: boolean | undefined;
  /** A background seal failed (the sentences stay in the growing segment; the next add tries again). */
  onSealError?: ((e: unknown) => void) | undefined;
}

/** What the writes go through. */
export interface WriteParts {
  store: SentenceStore;
  live: LiveIndex;
  embed: Embedder;
  tombstones: Set<number>;
  /**
   * A newer generation of the shards (a compaction run beside this process) swapped in once it
   * landed; true when it was (generation.ts). Asked on every follow and before every seal.
   */
  generations?: { next(): Promise<boolean> } | undefined;
}

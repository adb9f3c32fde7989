/** What SentenceWrites (writes.ts) takes and answers: a write's items, its outcomes, the writes' stats. */
import type { Meta } from '../store/index.js';
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

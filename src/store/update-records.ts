/** The records of an index's updates (updates.ts): what is stored per added sentence and what an add returns. */
import type { Meta, SentenceRecord } from './store.js';

/** An added sentence as the updates' LMDB keeps it (short keys: there may be millions). */
export interface StoredAdd {
  t: string;
  m?: Meta;
  /** The write's sequence number and time (ms since the epoch). */
  s: number;
  at: number;
  c?: string;
}

export interface NewAdd {
  text: string;
  meta?: Meta | undefined;
  /** The dedup key (normalized text). */
  key: string;
  vector: Float32Array;
  /** The client's id for the sentence: a retried write with the same one adds nothing twice. */
  clientId?: string | undefined;
}

/** What an add made of a row: a new sentence, one with its text, or the one its client id names. */
export type AddStatus = 'added' | 'duplicate' | 'retried';

export interface AddedSentence extends SentenceRecord {
  id: number;
  seq: number;
  at: number;
  clientId?: string;
}

/** What a read of one id finds: the added sentence, null for a deleted one, undefined when not written here. */
export type Lookup = SentenceRecord | null | undefined;

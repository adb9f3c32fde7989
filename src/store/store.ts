/**
 * LMDB sentence store beside the FAISS shards: id -> text + metadata, dedup-key hash -> id, and named
 * state records (build progress, job checkpoints). Ids are dense from 0 and identical to the FAISS ids.
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Database, open, type RootDatabase } from 'lmdb';
import { ParamineError } from '../errors.js';
import { warnIfLmdbUnfixed } from './lmdb-build.js';
import { checkLmdbFile } from './lmdb-check.js';
import { inTxn, lmdbWrite } from './write-errors.js';

/** The sentence store's directory inside an index directory. */
export const STORE_DIR = 'store';

export type Meta = Record<string, unknown>;

export interface SentenceRecord {
  text: string;
  meta?: Meta;
}

export interface NewSentence extends SentenceRecord {
  id: number;
  /** The dedup key (normalized text); stored hashed. */
  key: string;
}

interface StoredSentence {
  t: string;
  m?: Meta;
  /** Erased for good (a deleted sentence a rebuild applied): the id stays taken, its text is gone. */
  x?: 1;
}

export interface StoreOptions {
  readOnly?: boolean;
  /** Upper bound of the memory map; LMDB grows files lazily, so this only reserves address space. */
  mapSize?: number;
}

/** 128-bit hash of a dedup key: constant-size LMDB keys whatever the sentence length. */
export function keyHash(key: string): Buffer {
  return createHash('sha256').update(key).digest().subarray(0, 16);
}

/** Sentences written after the build (updates.ts): a record, null for a deleted id, undefined if unknown. */
export interface StoreOverlay {
  lookup(id: number): SentenceRecord | null | undefined;
}

export class SentenceStore {
  private readonly root: RootDatabase;
  private overlay: StoreOverlay | undefined;
  private readonly sentences: Database<StoredSentence, number>;
  private readonly dedup: Database<number, Buffer>;
  private readonly state: Database<unknown, string>;
  private closed = false;

  private constructor(root: RootDatabase) {
    this.root = root;
    this.sentences = root.openDB<StoredSentence, number>({ name: 'sentences', encoding: 'msgpack' });
    this.dedup = root.openDB<number, Buffer>({ name: 'dedup', keyEncoding: 'binary', encoding: 'msgpack' });
    this.state = root.openDB<unknown, string>({ name: 'state', encoding: 'json' });
  }

  static open(dir: string, options: StoreOptions = {}): SentenceStore {
    if (!options.readOnly) {
      mkdirSync(dir, { recursive: true });
      warnIfLmdbUnfixed();
    }
    try {
      checkLmdbFile(join(dir, 'data.mdb'));
      const root = open({
        path: dir,
        readOnly: options.readOnly ?? false,
        mapSize: options.mapSize ?? 2 ** 40,
        maxDbs: 8,
        // Durability comes from committing each batch together with its progress record.
        noMemInit: true,
      });
      return new SentenceStore(root);
    } catch (e) {
      throw new ParamineError(
        'BAD_FILE',
        `cannot open the sentence store at ${dir}: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    }
  }

  /** Number of sentences stored. */
  get count(): number {
    this.assertOpen();
    return (this.sentences.getStats() as { entryCount: number }).entryCount;
  }

  /** Reads go through `overlay` first: added sentences are found, deleted ones are not. */
  setOverlay(overlay: StoreOverlay | undefined): void {
    this.overlay = overlay;
  }

  /** Whether `id` was deleted after the build (its record reads as undefined). */
  isDeleted(id: number): boolean {
    return this.overlay?.lookup(id) === null;
  }

  get(id: number): SentenceRecord | undefined {
    this.assertOpen();
    const o = this.overlay?.lookup(id);
    if (o !== undefined) return o ?? undefined;
    return toRecord(this.sentences.get(id));
  }

  async getMany(ids: readonly number[]): Promise<Array<SentenceRecord | undefined>> {
    this.assertOpen();
    const rows = (await this.sentences.getMany(ids as number[])).map(toRecord);
    const o = this.overlay;
    if (o === undefined) return rows;
    return rows.map((r, i) => {
      const x = o.lookup(ids[i] as number);
      return x === undefined ? r : (x ?? undefined);
    });
  }

  /** Id of the sentence with this dedup key, if one was stored. */
  idForKey(key: string): number | undefined {
    this.assertOpen();
    return this.dedup.get(keyHash(key));
  }

  /** Sentences with ids in [start, end), in id order (an erased one as an empty text: positions hold). */
  *range(start: number, end: number): Generator<{ id: number; record: SentenceRecord }> {
    this.assertOpen();
    for (const { key, value } of this.sentences.getRange({ start, end })) {
      yield { id: key, record: toRecord(value) ?? { text: '' } };
    }
  }

  getState<T>(name: string): T | undefined {
    this.assertOpen();
    return this.state.get(name) as T | undefined;
  }

  /**
   * Appends sentences and writes state records in one LMDB transaction: after a crash either all of
   * them are there or none, so a progress record never points past data that was lost.
   */
  async commit(rows: readonly NewSentence[], state: Record<string, unknown> = {}): Promise<void> {
    this.assertOpen();
    await lmdbWrite('the sentence store', () =>
      this.root.transaction(() => {
        for (const r of rows) {
          inTxn(this.sentences.put(r.id, r.meta === undefined ? { t: r.text } : { t: r.text, m: r.meta }));
          inTxn(this.dedup.put(keyHash(r.key), r.id));
        }
        for (const [k, v] of Object.entries(state)) inTxn(this.state.put(k, v));
      }),
    );
  }

  /**
   * Erases sentences for good, in one transaction: text and metadata are dropped and their dedup key freed
   * (`keyOf` gives the key a text was stored under); the ids stay taken (count and ranges keep their
   * meaning) and read as undefined. `state` records are written in the same transaction. Returns how many
   * were erased now (idempotent).
   */
  async erase(
    ids: Iterable<number>,
    keyOf: (text: string) => string,
    state: Record<string, unknown> = {},
  ): Promise<number> {
    this.assertOpen();
    let erased = 0;
    await lmdbWrite('the sentence store', () =>
      this.root.transaction(() => {
        erased = 0;
        for (const id of ids) {
          const r = this.sentences.get(id);
          if (r === undefined || r.x === 1) continue;
          const hash = keyHash(keyOf(r.t));
          if (this.dedup.get(hash) === id) inTxn(this.dedup.remove(hash));
          inTxn(this.sentences.put(id, { t: '', x: 1 }));
          erased++;
        }
        for (const [k, v] of Object.entries(state)) inTxn(this.state.put(k, v));
      }),
    );
    return erased;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.root.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new ParamineError('INDEX_CLOSED', 'the sentence store is closed');
  }
}

function toRecord(v: StoredSentence | undefined): SentenceRecord | undefined {
  if (v === undefined || v.x === 1) return undefined;
  return v.m === undefined ? { text: v.t } : { text: v.t, meta: v.m };
}

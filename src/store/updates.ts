/**
 * The writes made to a built index while it serves (`POST /v1/sentences`, `paramine add` / `delete`): an
 * LMDB environment beside the sentence store (INDEX/updates) holding each added sentence (text, metadata,
 * its embedding, the write's sequence number), its dedup key and client id, and a tombstone per deleted
 * sentence. One write (a batch of adds, or of deletes) is one LMDB transaction, committed and flushed
 * before it is acknowledged: a process killed right after the answer loses nothing, and a write cut short
 * leaves nothing of itself. The flush comes from lmdb-js itself: with `overlappingSync` (its default on
 * Linux, kept here) a transaction's promise resolves only after the commit's fdatasync returned (run off
 * the main thread), and every caller awaits it before answering; test/reliability/flush-before-answer
 * slows every flush by 300 ms and checks no 2xx leaves before one returned. Added ids continue the index's own (base count, base count + 1, …), so every
 * reader (the store, the search, exports) sees one id space.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Database, open, type RootDatabase } from 'lmdb';
import { ParamineError } from '../errors.js';
import type { SegmentInfo } from '../index/index.js';
import { warnIfLmdbUnfixed } from './lmdb-build.js';
import { checkLmdbFile } from './lmdb-check.js';
import { keyHash } from './store.js';
import type { AddedSentence, AddStatus, Lookup, NewAdd, StoredAdd } from './update-records.js';
import { inTxn, lmdbWrite } from './write-errors.js';

export type { AddedSentence, AddStatus, Lookup, NewAdd } from './update-records.js';

/** The updates' directory inside an index directory. */
export const UPDATES_DIR = 'updates';

/** The most ids one delete takes or reports (a delete by filter counts all it deleted). */
export const MAX_REPORTED_IDS = 10_000;

export class IndexUpdates {
  readonly #root: RootDatabase;
  readonly #sentences: Database<StoredAdd, number>;
  readonly #vectors: Database<Buffer, number>;
  readonly #dedup: Database<number, Buffer>;
  readonly #clients: Database<number, string>;
  readonly #deleted: Database<{ s: number; at: number }, number>;
  readonly #meta: Database<number | SegmentInfo[], string>;
  readonly #tombstones: Set<number>;
  readonly #dir: string;
  /** Writes one at a time: each takes the next ids and sequence number from the last one's commit. */
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  private constructor(
    root: RootDatabase,
    dir: string,
    /** Sentences in the built index: the first added id. */
    readonly base: number,
    tombstones: Set<number>,
  ) {
    this.#root = root;
    this.#dir = dir;
    this.#tombstones = tombstones;
    this.#sentences = root.openDB({ name: 'sentences', encoding: 'msgpack' });
    this.#vectors = root.openDB({ name: 'vectors', encoding: 'binary' });
    this.#dedup = root.openDB({ name: 'dedup', keyEncoding: 'binary', encoding: 'msgpack' });
    this.#clients = root.openDB({ name: 'clients', encoding: 'msgpack' });
    this.#deleted = root.openDB({ name: 'deleted', encoding: 'msgpack' });
    this.#meta = root.openDB({ name: 'meta', encoding: 'json' });
    for (const { key } of this.#deleted.getRange()) this.#tombstones.add(key);
  }

  /**
   * Opens (creating) INDEX/updates for an index of `base` sentences; the deleted ids are kept in
   * `tombstones` (filled here, shared with the live index that filters them).
   */
  static open(indexDir: string, base: number, tombstones = new Set<number>()): IndexUpdates {
    const dir = join(indexDir, UPDATES_DIR);
    warnIfLmdbUnfixed();
    try {
      mkdirSync(dir, { recursive: true });
      checkLmdbFile(join(dir, 'data.mdb'));
      const root = open({ path: dir, mapSize: 2 ** 40, maxDbs: 8, noMemInit: true });
      return new IndexUpdates(root, dir, base, tombstones);
    } catch (e) {
      if (e instanceof ParamineError) throw e;
      throw new ParamineError(
        'BAD_FILE',
        `cannot open the index's updates at ${dir}: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    }
  }

  /** The next write's sequence number (0 before any write). */
  get seq(): number {
    return (this.#meta.get('seq') as number | undefined) ?? 0;
  }

  /** The next id an add gets. */
  get nextId(): number {
    return (this.#meta.get('next') as number | undefined) ?? this.base;
  }

  /** The sealed segments (segment.ts), in id order: their files are in this directory. */
  get segments(): SegmentInfo[] {
    return (this.#meta.get('segments') as SegmentInfo[] | undefined) ?? [];
  }

  /** Ids below this are in the index's shards (`index --rebuild` folded the added ones in). */
  get foldedTo(): number {
    return (this.#meta.get('folded') as number | undefined) ?? this.base;
  }

  /** Ids below this were recorded as folded into the shards by a rebuild (0: never). */
  get foldRecorded(): number {
    return (this.#meta.get('folded') as number | undefined) ?? 0;
  }

  /** Added ids below this are in the shards or in sealed segments. */
  get sealedTo(): number {
    const last = this.segments.at(-1);
    return Math.max(this.foldedTo, last === undefined ? this.base : last.first + last.count);
  }

  /**
   * Records that ids below `ntotal` are in the shards now (a rebuild); the sealed segments below it are
   * dropped from the record and their files removed. Idempotent.
   */
  fold(ntotal: number): Promise<void> {
    return this.#serial(async () => {
      this.#assertOpen();
      let gone: SegmentInfo[] = [];
      await lmdbWrite("the index's updates", () =>
        this.#root.transaction(() => {
          const segments = this.segments;
          gone = segments.filter((x) => x.first < ntotal);
          inTxn(this.#meta.put('folded', Math.max(this.foldedTo, ntotal)));
          inTxn(
            this.#meta.put(
              'segments',
              segments.filter((x) => x.first >= ntotal),
            ),
          );
        }),
      );
      for (const x of gone) {
        rmSync(join(this.#dir, x.index.file), { force: true });
        rmSync(join(this.#dir, x.vectors.file), { force: true });
      }
    });
  }

  /** The directory sealed segments' files go in. */
  get dir(): string {
    return this.#dir;
  }

  /** Records a sealed segment whose files are already durable in `dir` (one durable write). */
  recordSegment(info: SegmentInfo): Promise<void> {
    return this.#serial(async () => {
      this.#assertOpen();
      await lmdbWrite("the index's updates", () =>
        this.#root.transaction(() => {
          // Read under the write lock: another process (`paramine add`) may have sealed meanwhile.
          if (info.first !== this.sealedTo || info.first + info.count > this.nextId) {
            throw new ParamineError(
              'CONFLICT',
              `a sealed segment must start at id ${this.sealedTo} and end by ${this.nextId}; this one holds ${info.first}..${info.first + info.count - 1}`,
            );
          }
          inTxn(this.#meta.put('segments', [...this.segments, info]));
        }),
      );
    });
  }

  /** Sentences added (deleted ones included). */
  get added(): number {
    return this.nextId - this.base;
  }

  /** Ids deleted (built or added ones). */
  get tombstones(): ReadonlySet<number> {
    return this.#tombstones;
  }

  /** Takes in the tombstones another process wrote since this one opened (deletes are never undone). */
  reloadTombstones(): void {
    // Every tombstone is in both, so equal counts mean nothing new (a serving process asks every second).
    const stored = (this.#deleted.getStats() as { entryCount: number }).entryCount;
    if (stored === this.#tombstones.size) return;
    for (const id of this.#deleted.getKeys()) this.#tombstones.add(id);
  }

  isDeleted(id: number): boolean {
    return this.#tombstones.has(id);
  }

  lookup(id: number): Lookup {
    if (this.#tombstones.has(id)) return null;
    if (id < this.base) return undefined;
    const r = this.#sentences.get(id);
    return r === undefined ? undefined : r.m === undefined ? { text: r.t } : { text: r.t, meta: r.m };
  }

  /** Id of a live added sentence with this dedup key. */
  idForKey(key: string): number | undefined {
    const id = this.#dedup.get(keyHash(key));
    return id === undefined || this.#tombstones.has(id) ? undefined : id;
  }

  idForClient(clientId: string): number | undefined {
    return this.#clients.get(clientId);
  }

  /** Every added sentence (deleted ones too) from id `from` on, in id order, without its vector. */
  *addedSentences(from = this.base): Generator<AddedSentence> {
    for (const { key, value } of this.#sentences.getRange({ start: from })) {
      yield {
        id: key,
        text: value.t,
        ...(value.m === undefined ? {} : { meta: value.m }),
        seq: value.s,
        at: value.at,
        ...(value.c === undefined ? {} : { clientId: value.c }),
      };
    }
  }

  /** The first added id written at or after `since` (a sequence number, a time, or an id); nextId when none. */
  firstIdSince(since: { seq: number } | { time: string } | { id: number }): number {
    if ('id' in since) return Math.min(this.nextId, Math.max(this.base, since.id));
    const after: (a: AddedSentence) => boolean =
      'seq' in since ? (a) => a.seq >= since.seq : (a) => a.at >= Date.parse(since.time);
    // Ids grow with the writes' sequence numbers and times: the first match starts the new ones.
    for (const a of this.addedSentences()) if (after(a)) return a.id;
    return this.nextId;
  }

  /** The embeddings of added ids, as added (ids.length x dim; deleted ones too). */
  vectorsOf(ids: readonly number[]): Float32Array {
    const rows = ids.map((id) => this.#vector(id));
    const dim = rows[0]?.length ?? 0;
    const out = new Float32Array(ids.length * dim);
    rows.forEach((r, i) => {
      out.set(r, i * dim);
    });
    return out;
  }

  /** Every added sentence with its vector from id `from` on, in id order (what a restarted service loads). */
  *addedRange(from = this.base): Generator<AddedSentence & { vector: Float32Array }> {
    for (const a of this.addedSentences(from)) {
      yield { ...a, vector: this.#vector(a.id) };
    }
  }

  /**
   * Adds the rows in one durable transaction; resolves to their ids once it is on disk. `replaced` ids are
   * tombstoned in that same transaction (a replace is never half done). Whether a row is new is decided
   * inside it: a client id already recorded, or a dedup key of a live added sentence, resolves to that
   * sentence (`retried`, `duplicate`) however many writers raced to it, in this process or another (LMDB
   * serializes write transactions across processes, and the reads in one see every commit before it, given
   * lmdb-js built with the ITS#9496 fix: store/lmdb-build.ts). Only `added` rows take a new id.
   */
  add(
    rows: readonly NewAdd[],
    replaced: readonly number[] = [],
  ): Promise<{ ids: number[]; status: AddStatus[]; seq: number }> {
    return this.#serial(() => this.#add(rows, replaced));
  }

  async #add(rows: readonly NewAdd[], replaced: readonly number[]) {
    this.#assertOpen();
    const gone = [...new Set(replaced)].filter((id) => !this.#tombstones.has(id));
    const at = Date.now();
    let ids: number[] = [];
    let status: AddStatus[] = [];
    let seq = 0;
    await lmdbWrite("the index's updates", () =>
      this.#root.transaction(() => {
        let next = this.nextId;
        seq = this.seq;
        ids = [];
        status = [];
        for (const r of rows) {
          const known = this.#knownInTxn(r);
          if (known !== undefined) {
            ids.push(known.id);
            status.push(known.status);
            continue;
          }
          const id = next++;
          ids.push(id);
          status.push('added');
          const stored: StoredAdd = { t: r.text, s: seq, at };
          if (r.meta !== undefined) stored.m = r.meta;
          if (r.clientId !== undefined) {
            stored.c = r.clientId;
            inTxn(this.#clients.put(r.clientId, id));
          }
          inTxn(this.#sentences.put(id, stored));
          inTxn(
            this.#vectors.put(id, Buffer.from(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength)),
          );
          inTxn(this.#dedup.put(keyHash(r.key), id));
        }
        for (const id of gone) inTxn(this.#deleted.put(id, { s: seq, at }));
        inTxn(this.#meta.put('next', next));
        inTxn(this.#meta.put('seq', seq + 1));
      }),
    );
    for (const id of gone) this.#tombstones.add(id);
    return { ids, status, seq };
  }

  /** Inside the write transaction: the sentence a row's client id or text already names, if live. */
  #knownInTxn(r: NewAdd): { id: number; status: AddStatus } | undefined {
    const byClient = r.clientId === undefined ? undefined : this.#clients.get(r.clientId);
    if (byClient !== undefined) return { id: byClient, status: 'retried' };
    const byKey = this.#dedup.get(keyHash(r.key));
    // Deleted by this process, or by another one since (its tombstone is in the same database).
    if (byKey !== undefined && !this.#tombstones.has(byKey) && this.#deleted.get(byKey) === undefined) {
      return { id: byKey, status: 'duplicate' };
    }
    return undefined;
  }

  /** Tombstones ids in one durable transaction; resolves to those not deleted before. */
  delete(ids: readonly number[]): Promise<number[]> {
    return this.#serial(() => this.#delete(ids));
  }

  async #delete(ids: readonly number[]): Promise<number[]> {
    this.#assertOpen();
    const fresh = [...new Set(ids)].filter((id) => !this.#tombstones.has(id));
    if (fresh.length === 0) return [];
    const at = Date.now();
    await lmdbWrite("the index's updates", () =>
      this.#root.transaction(() => {
        const seq = this.seq;
        for (const id of fresh) inTxn(this.#deleted.put(id, { s: seq, at }));
        inTxn(this.#meta.put('seq', seq + 1));
      }),
    );
    for (const id of fresh) this.#tombstones.add(id);
    return fresh;
  }

  /**
   * Erases deleted added sentences for good (a rebuild applying deletes): text, metadata, embedding and
   * dedup key go in one transaction; the tombstone, sequence number and client id stay (a retried write
   * still finds its id). Live ids are refused.
   */
  erase(ids: Iterable<number>, keyOf: (text: string) => string): Promise<number> {
    return this.#serial(async () => {
      this.#assertOpen();
      let erased = 0;
      await lmdbWrite("the index's updates", () =>
        this.#root.transaction(() => {
          erased = 0;
          for (const id of ids) {
            if (!this.#tombstones.has(id)) {
              throw new ParamineError('INTERNAL', `erase: sentence ${id} is not deleted`);
            }
            const r = this.#sentences.get(id);
            if (r === undefined || (r.t === '' && this.#vectors.get(id) === undefined)) continue;
            const hash = keyHash(keyOf(r.t));
            if (this.#dedup.get(hash) === id) inTxn(this.#dedup.remove(hash));
            const { m: _meta, ...kept } = r;
            inTxn(this.#sentences.put(id, { ...kept, t: '' }));
            inTxn(this.#vectors.remove(id));
            erased++;
          }
        }),
      );
      return erased;
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#queue.catch(() => undefined);
    this.#closed = true;
    await this.#root.close();
  }

  #serial<T>(write: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(write, write);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** An added sentence's stored embedding, copied out of LMDB's buffer. */
  #vector(id: number): Float32Array {
    const buf = this.#vectors.get(id) as Buffer | undefined;
    if (buf === undefined) throw new ParamineError('NOT_FOUND', `no added sentence with id ${id}`);
    return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
  }

  #assertOpen(): void {
    if (this.#closed) throw new ParamineError('UNAVAILABLE', "the index's updates are closed");
  }
}

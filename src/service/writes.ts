/**
 * Adds and deletes on a serving index (issue #30): texts are normalized and de-duplicated as the build
 * does (against the built sentences and the added ones), embedded, written durably (store/updates.ts:
 * one LMDB transaction per write, on disk before the answer), then put into the live index's growing
 * segment, so a sentence is searchable the moment its write is acknowledged. A client id makes a
 * retried write add nothing twice. After a restart the segment is loaded back from the updates.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Embedder } from '../encode/index.js';
import { ParamineError } from '../errors.js';
import type { LiveIndex } from '../index/index.js';
import {
  IndexUpdates,
  MAX_REPORTED_IDS,
  type Meta,
  type NewAdd,
  type SentenceStore,
  UPDATES_DIR,
} from '../store/index.js';
import { dedupKey, normalize } from '../text/index.js';

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
}

export class SentenceWrites {
  #updates: IndexUpdates | undefined;

  private constructor(
    private readonly dir: string,
    private readonly store: SentenceStore,
    private readonly live: LiveIndex,
    private readonly embed: Embedder,
    private readonly tombstones: Set<number>,
  ) {}

  /** Loads the index's earlier writes, if any, into the store's overlay and the live segment. */
  static async open(
    dir: string,
    parts: { store: SentenceStore; live: LiveIndex; embed: Embedder; tombstones: Set<number> },
  ): Promise<SentenceWrites> {
    const w = new SentenceWrites(dir, parts.store, parts.live, parts.embed, parts.tombstones);
    if (existsSync(join(dir, UPDATES_DIR))) await w.#load();
    return w;
  }

  get stats(): WriteStats {
    const u = this.#updates;
    return { added: u?.added ?? 0, deleted: u?.tombstones.size ?? 0, seq: u?.seq ?? 0 };
  }

  async add(items: readonly AddItem[]): Promise<AddOutcome[]> {
    const u = this.#open();
    const out: AddOutcome[] = [];
    const fresh: NewAdd[] = [];
    /** Outcomes waiting for the id of fresh[i] (its own, or a repeat of its text in this write). */
    const pending: Array<[AddOutcome, number]> = [];
    const batchKeys = new Map<string, number>();
    const replaced: number[] = [];
    for (const [at, item] of items.entries()) {
      const text = normalize(item.text);
      if (text.trim() === '') {
        throw new ParamineError('BAD_INPUT', `sentences[${at}]: the text is empty after normalization`, {
          field: `sentences.${at}.text`,
        });
      }
      const key = dedupKey(text);
      const retried = item.clientId === undefined ? undefined : u.idForClient(item.clientId);
      const existing = retried ?? this.#liveId(key);
      const tag = item.clientId === undefined ? {} : { clientId: item.clientId };
      if (item.replaces !== undefined && retried === undefined && item.replaces !== existing) {
        if (!this.#isLive(item.replaces)) {
          throw new ParamineError(
            'NOT_FOUND',
            `sentences[${at}].replaces: no sentence with id ${item.replaces}`,
            {
              field: `sentences.${at}.replaces`,
            },
          );
        }
        replaced.push(item.replaces);
      }
      if (existing !== undefined) {
        out.push({ id: existing, status: retried !== undefined ? 'retried' : 'duplicate', ...tag });
        continue;
      }
      const repeat = batchKeys.get(key);
      const outcome: AddOutcome = { id: -1, status: repeat === undefined ? 'added' : 'duplicate', ...tag };
      out.push(outcome);
      pending.push([outcome, repeat ?? fresh.length]);
      if (repeat !== undefined) continue;
      batchKeys.set(key, fresh.length);
      fresh.push({ text, meta: item.meta, key, clientId: item.clientId, vector: new Float32Array(0) });
    }
    if (fresh.length > 0) {
      const dim = this.live.dim;
      const vectors = await this.embed.encode(fresh.map((f) => f.text));
      fresh.forEach((f, i) => {
        f.vector = vectors.subarray(i * dim, (i + 1) * dim);
      });
      const { ids } = await u.add(fresh, replaced);
      await this.live.add(vectors, ids);
      for (const [outcome, i] of pending) outcome.id = ids[i] as number;
    } else if (replaced.length > 0) {
      await u.delete(replaced);
    }
    return out;
  }

  /** Live sentences (built or added) whose metadata matches `filter` (a scan: an operator's occasional call). */
  matching(filter: MetaFilter): number[] {
    const u = this.#open();
    const tests = Object.entries(filter).map(([key, want]) => {
      const allowed = new Set<unknown>(Array.isArray(want) ? want : [want]);
      return (meta: Meta | undefined) => meta !== undefined && allowed.has(meta[key]);
    });
    const hit = (meta: Meta | undefined) => tests.every((test) => test(meta));
    const ids: number[] = [];
    for (const { id, record } of this.store.range(0, this.store.count)) {
      if (!this.tombstones.has(id) && hit(record.meta)) ids.push(id);
    }
    for (const a of u.addedSentences()) if (!this.tombstones.has(a.id) && hit(a.meta)) ids.push(a.id);
    return ids;
  }

  /** Deletes every live sentence whose metadata matches (one durable write). */
  async deleteWhere(filter: MetaFilter): Promise<{ deleted: number; ids: number[] }> {
    const deleted = await this.#open().delete(this.matching(filter));
    return { deleted: deleted.length, ids: deleted.slice(0, MAX_REPORTED_IDS) };
  }

  /** Tombstones ids; unknown ids are reported, not an error for the others. */
  async delete(ids: readonly number[]): Promise<{ deleted: number[]; missing: number[] }> {
    const u = this.#open();
    const present: number[] = [];
    const missing: number[] = [];
    for (const id of ids) {
      // Live (built or added), deleted before (nothing to do), or no such sentence.
      if (this.#isLive(id)) present.push(id);
      else if (!this.tombstones.has(id)) missing.push(id);
    }
    return { deleted: await u.delete(present), missing };
  }

  async close(): Promise<void> {
    await this.#updates?.close();
    this.#updates = undefined;
  }

  #isLive(id: number): boolean {
    return id >= 0 && id < this.#open().nextId && this.store.get(id) !== undefined;
  }

  /** A live sentence (built or added) with this dedup key. */
  #liveId(key: string): number | undefined {
    const built = this.store.idForKey(key);
    if (built !== undefined && !this.tombstones.has(built)) return built;
    return this.#updates?.idForKey(key);
  }

  #open(): IndexUpdates {
    if (this.#updates === undefined) {
      this.#updates = IndexUpdates.open(this.dir, this.store.count, this.tombstones);
      this.store.setOverlay(this.#updates);
    }
    return this.#updates;
  }

  async #load(): Promise<void> {
    const u = this.#open();
    const dim = this.live.dim;
    let ids: number[] = [];
    let rows: Float32Array[] = [];
    const flush = async () => {
      const m = new Float32Array(ids.length * dim);
      rows.forEach((v, i) => {
        m.set(v, i * dim);
      });
      await this.live.add(m, ids);
      ids = [];
      rows = [];
    };
    for (const a of u.addedRange()) {
      ids.push(a.id);
      rows.push(a.vector);
      if (ids.length === 4096) await flush();
    }
    if (ids.length > 0) await flush();
  }
}

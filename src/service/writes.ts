/**
 * Adds and deletes on a serving index (issue #30): texts are normalized and de-duplicated as the build
 * does (against the built sentences and the added ones), embedded, written durably (store/updates.ts:
 * one LMDB transaction per write, on disk before the answer), then put into the live index's growing
 * segment, so a sentence is searchable the moment its write is acknowledged. A client id makes a
 * retried write add nothing twice. After a restart the segment is loaded back from the updates.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Embedder } from '../encode/index.js';
import { ParamineError } from '../errors.js';
import {
  compactedFit,
  gatherRows,
  type LiveIndex,
  openSegment,
  quantizationFit,
  type SegmentFit,
  sealSegment,
  spread,
} from '../index/index.js';
import type { AddedSentences } from '../jobs/index.js';
import type { FaissIndex } from '../native/index.js';
import {
  IndexUpdates,
  loadWrites,
  MAX_REPORTED_IDS,
  type Meta,
  type NewAdd,
  type SentenceStore,
  sealLock,
  UPDATES_DIR,
} from '../store/index.js';
import { dedupKey, normalize } from '../text/index.js';
import { driftOf } from './drift.js';
import type { AddItem, AddOutcome, MetaFilter, SealOptions, WriteParts, WriteStats } from './write-types.js';

export type { AddItem, AddOutcome, MetaFilter, SealOptions, WriteParts, WriteStats } from './write-types.js';

/** Growing-segment size that triggers a seal: exact search over it stays a few ms a query on 2 cores. */
export const SEAL_AT = 20_000;
/** Vectors measured for the quantizers' fit (each side). */
const FIT_SAMPLE = 2000;
/** Records a metadata scan reads between two turns of the event loop. */
export const SCAN_SLICE = 4096;
/** How often a serving process looks for writes made by another one. */
const FOLLOW_MS = 1000;

export class SentenceWrites {
  #updates: IndexUpdates | undefined;
  #sealing: Promise<void> | undefined;
  #template: Promise<FaissIndex> | undefined;
  #baseFit: Promise<SegmentFit | undefined> | undefined;
  #baseFitValue: SegmentFit | undefined;
  #follower: NodeJS.Timeout | undefined;
  #following: Promise<void> | undefined;
  /** The updates' sequence number and next id when another process's writes were last taken in. */
  #followed = { seq: -1, nextId: 0 };

  private constructor(
    private readonly dir: string,
    private readonly store: SentenceStore,
    private readonly live: LiveIndex,
    private readonly embed: Embedder,
    private readonly tombstones: Set<number>,
    private readonly options: Pick<WriteParts, 'generations'> & SealOptions,
  ) {}

  /** Loads the index's earlier writes, if any, into the store's overlay, the sealed segments and the growing one. */
  static async open(dir: string, parts: WriteParts & SealOptions): Promise<SentenceWrites> {
    const w = new SentenceWrites(dir, parts.store, parts.live, parts.embed, parts.tombstones, parts);
    if (existsSync(join(dir, UPDATES_DIR))) await w.#load();
    if (parts.follow) {
      w.#follower = setInterval(() => {
        w.#following ??= w.#follow().finally(() => {
          w.#following = undefined;
        });
      }, FOLLOW_MS).unref();
    }
    return w;
  }

  get stats(): WriteStats {
    const u = this.#updates;
    const segments = u?.segments ?? [];
    return {
      added: u?.added ?? 0,
      deleted: u?.tombstones.size ?? 0,
      seq: u?.seq ?? 0,
      growing: this.live.segmentSize,
      sealed: { segments: segments.length, sentences: segments.reduce((a, x) => a + x.count, 0) },
      drift: driftOf(
        this.#baseFitValue,
        this.#updates?.segments ?? [],
        compactedFit(this.live.base.manifest),
      ),
    };
  }

  /** The added sentences as mining jobs read them (ids, embeddings, where `since` starts). */
  get added(): AddedSentences {
    const self = this;
    return {
      get base() {
        return self.store.count;
      },
      get nextId() {
        return self.#updates?.nextId ?? self.store.count;
      },
      firstSince: (since) => self.#updates?.firstIdSince(since) ?? self.store.count,
      vectors: (ids) => self.#open().vectorsOf(ids),
      *sentences(from, to) {
        for (const a of self.#updates?.addedSentences(from) ?? []) {
          if (a.id >= to) return;
          yield {
            id: a.id,
            record: a.meta === undefined ? { text: a.text } : { text: a.text, meta: a.meta },
          };
        }
      },
    };
  }

  /** The live sentence POST /v1/sentences or `paramine add` added under this client id, if any. */
  idForClient(clientId: string): number | undefined {
    const id = this.#updates?.idForClient(clientId);
    return id !== undefined && this.#isLive(id) ? id : undefined;
  }

  /** An added sentence's text and embedding (domains score it from them); undefined when not an added one. */
  addedRow(id: number): { text: string; vector: Float32Array } | undefined {
    const u = this.#updates;
    const r = u?.lookup(id);
    return u && r ? { text: r.text, vector: u.vectorsOf([id]) } : undefined;
  }

  /**
   * Seals what the growing segment holds now (ids from the last sealed one on, as far as they run
   * without a gap) into a segment of the build's kind; resolves when it is searchable. A seal already
   * running is waited for instead. Resolves to the sentences sealed.
   */
  async seal(): Promise<number> {
    // One seal at a time: each reads where the last one ended (a follow may swap the shards under it).
    while (this.#sealing || this.#following) await (this.#sealing ?? this.#following)?.catch(() => undefined);
    let sealed = 0;
    this.#sealing = (async () => {
      sealed = await this.#sealNow();
    })().finally(() => {
      this.#sealing = undefined;
    });
    await this.#sealing;
    return sealed;
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
          field: `sentences[${at}].text`,
        });
      }
      const key = dedupKey(text);
      const retried = item.clientId === undefined ? undefined : u.idForClient(item.clientId);
      const existing = retried ?? this.#liveId(key);
      const tag = item.clientId === undefined ? {} : { clientId: item.clientId };
      if (item.replaces !== undefined && retried === undefined && item.replaces !== existing) {
        if (!this.#isLive(item.replaces)) {
          const field = `sentences[${at}].replaces`;
          throw new ParamineError('NOT_FOUND', `${field}: no sentence with id ${item.replaces}`, { field });
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
      // The write transaction decides what is new (a concurrent write may have added the same text or
      // client id since the checks above): only those rows' vectors join the live index.
      const { ids, status } = await u.add(fresh, replaced);
      const added = fresh.flatMap((_, i) => (status[i] === 'added' ? [i] : []));
      const kept = added.length === fresh.length ? vectors : gatherRows(vectors, added, dim);
      if (added.length > 0)
        await this.live.add(
          kept,
          added.map((i) => ids[i] as number),
        );
      for (const [outcome, i] of pending) {
        outcome.id = ids[i] as number;
        // A repeat of a text within this write stays `duplicate`; the row itself says what the transaction found.
        if (outcome.status === 'added') outcome.status = status[i] as AddOutcome['status'];
      }
      if (this.live.segmentSize >= (this.options.sealAt ?? SEAL_AT) && this.#sealing === undefined) {
        // In the background: the write is acknowledged now; searches see the segment once it is sealed.
        this.seal().catch((e: unknown) => this.options.onSealError?.(e));
      }
    } else if (replaced.length > 0) {
      await u.delete(replaced);
    }
    return out;
  }

  /**
   * Live sentences (built or added) whose metadata matches `filter`: a scan, in slices of SCAN_SLICE
   * records with the event loop let go between them, so searches go on answering during a takedown.
   */
  async matching(filter: MetaFilter): Promise<number[]> {
    const u = this.#open();
    const tests = Object.entries(filter).map(([key, want]) => {
      const allowed = new Set<unknown>(Array.isArray(want) ? want : [want]);
      return (meta: Meta | undefined) => meta !== undefined && allowed.has(meta[key]);
    });
    const hit = (id: number, meta: Meta | undefined) =>
      !this.tombstones.has(id) && tests.every((t) => t(meta));
    const ids: number[] = [];
    for (let from = 0; from < this.store.count; from += SCAN_SLICE) {
      for (const { id, record } of this.store.range(from, Math.min(this.store.count, from + SCAN_SLICE)))
        if (hit(id, record.meta)) ids.push(id);
      await new Promise((r) => setImmediate(r));
    }
    for (const a of u.addedSentences()) if (hit(a.id, a.meta)) ids.push(a.id);
    return ids;
  }

  /** Deletes every live sentence whose metadata matches (one durable write). */
  async deleteWhere(filter: MetaFilter): Promise<{ deleted: number; ids: number[] }> {
    const deleted = await this.#open().delete(await this.matching(filter));
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
    clearInterval(this.#follower);
    this.#follower = undefined;
    await this.#following;
    await this.#sealing?.catch(() => undefined);
    await this.#updates?.close();
    this.#updates = undefined;
    const template = this.#template;
    this.#template = undefined;
    await (await template?.catch(() => undefined))?.close();
  }

  async #sealNow(): Promise<number> {
    // One sealer of an index across processes (a `paramine add` beside the service), none during a
    // compaction: held by another, the sentences stay growing and the next add tries again.
    const lock = sealLock(this.dir);
    if (lock === undefined) return 0;
    try {
      // A compaction that ended since the last look folded ids this seal would otherwise write again.
      await this.#nextGeneration();
      return await this.#sealLocked();
    } finally {
      lock.release();
    }
  }

  async #sealLocked(): Promise<number> {
    const u = this.#open();
    const from = u.sealedTo;
    const rows = this.live.growingFrom(from);
    let count = 0;
    while (count < rows.ids.length && rows.ids[count] === from + count) count++;
    if (count === 0) return 0;
    const dim = this.live.dim;
    const vectors = rows.vectors.subarray(0, count * dim);
    this.#template ??= this.live.base.template();
    const template = await this.#template;
    const info = await sealSegment(u.dir, template, from, vectors);
    const sample = gatherRows(vectors, spread([...Array(count).keys()], FIT_SAMPLE), dim);
    const fit = await quantizationFit(template, sample, this.#fitParams());
    await u.recordSegment({ ...info, fit });
    await this.live.adopt(await openSegment(u.dir, { ...info, fit }, dim));
    await this.#measureBaseFit();
    return count;
  }

  #fitParams() {
    return this.live.base.searchPlan(1, {}, true).params;
  }

  /** The build's own fit, measured once (on a sample of vectors.f16) when the first segment is there. */
  #measureBaseFit(): Promise<SegmentFit | undefined> {
    this.#baseFit ??= (async () => {
      const sample = await this.live.base.sampleVectors(FIT_SAMPLE);
      if (sample === undefined) return undefined;
      this.#template ??= this.live.base.template();
      this.#baseFitValue = await quantizationFit(await this.#template, sample, this.#fitParams());
      return this.#baseFitValue;
    })();
    return this.#baseFit;
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

  /** Another process's writes since the last look, taken in (not while this one seals: it reads sealedTo). */
  async #follow(): Promise<void> {
    if (this.#sealing !== undefined || this.#follower === undefined) return;
    await this.#nextGeneration().catch((e: unknown) => this.options.onSealError?.(e));
    if (this.#updates === undefined && !existsSync(join(this.dir, UPDATES_DIR, 'data.mdb'))) return;
    const u = this.#open();
    const { seq, nextId } = u;
    if (seq === this.#followed.seq) return;
    try {
      u.reloadTombstones();
      await loadWrites(u, this.live, this.#followed.nextId);
      this.#followed = { seq, nextId };
    } catch (e) {
      this.options.onSealError?.(e);
    }
  }

  /** A new generation of the shards taken up: the template and fit measured on the old ones go. */
  async #nextGeneration(): Promise<void> {
    if (!(await this.options.generations?.next())) return;
    const template = this.#template;
    [this.#template, this.#baseFit, this.#baseFitValue] = [undefined, undefined, undefined];
    await (await template?.catch(() => undefined))?.close();
    await this.#measureDrift();
  }

  /** Sealed segments, or sentences a compaction folded in untrained: the build's own fit, to report drift. */
  async #measureDrift(): Promise<void> {
    const folded = compactedFit(this.live.base.manifest) !== undefined;
    if ((this.#updates?.segments.length ?? 0) > 0 || folded) await this.#measureBaseFit();
  }

  async #load(): Promise<void> {
    const u = this.#open();
    // A seal cut short before its record leaves files no segment names: its sentences are still growing.
    // Not while another process seals (its files are not recorded yet): the next start sweeps them.
    const lock = sealLock(this.dir);
    if (lock !== undefined) {
      try {
        const recorded = new Set(u.segments.flatMap((x) => [x.index.file, x.vectors.file]));
        for (const f of readdirSync(u.dir))
          if (/^seg-/.test(f) && !recorded.has(f)) rmSync(join(u.dir, f), { force: true });
      } finally {
        lock.release();
      }
    }
    await loadWrites(u, this.live);
    await this.#measureDrift();
  }
}

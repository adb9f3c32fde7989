/**
 * A built index that takes writes while it serves: sentences added since the build sit first in a growing
 * exact segment (FAISS `IDMap,Flat`: searchable the moment they are added, exact at any setting), then in
 * sealed segments of the build's own kind (segment.ts), searched beside the shards at the same settings
 * and re-scored exactly; deleted ids are tombstones filtered out of every answer: inside the search, by a
 * bitmap FAISS skips (tombstones.ts), with a query that comes back short searched again over more lists;
 * where the shards take no selector (fast-scan) or the set has no bitmap, by asking for k plus as many more
 * as there are tombstones not yet removed from the shards (up to MAX_OVERFETCH) and dropping the deleted.
 *
 * Each search takes the shards and segments as they are when it starts (one synchronous read of `#view`);
 * a seal, or a new generation of the shards (`rebase`, after a compaction or rebuild), swaps in a new view
 * at once, and an index it retires is closed by FAISS only after the searches still running on it finish
 * (the binding defers close).
 */
import { createIndex, type FaissIndex, type Metric, type SearchResult } from '../native/index.js';
import { closeSegment, type OpenSegment, searchSegment } from './segment.js';
import type { ShardedIndex, ShardSearchParams } from './sharded.js';
import { gatherRows } from './source.js';
import { TombstoneSet } from './tombstones.js';

/** Most extra neighbours a search asks the built shards for, to make up for deleted ones. */
export const MAX_OVERFETCH = 1024;

interface View {
  base: ShardedIndex;
  sealed: readonly OpenSegment[];
  growing: FaissIndex | undefined;
}

/** Rows added to the growing segment, kept so a seal can rebuild it without the rows sealed. */
interface Rows {
  ids: number[];
  vectors: Float32Array;
}

export class LiveIndex {
  #view: View;
  /** What the growing segment holds, in add order. */
  #rows: Rows[] = [];
  /** Its ids: an id added twice (a write another process made, read back) goes in once. */
  #held = new Set<number>();
  /** Ids below this are in sealed segments (or the build): a late add of one of them is already there. */
  #sealedTo = 0;
  /** The searches running now (settled, never rejected): a rebase closes what it retires after them. */
  #running = new Set<Promise<void>>();
  /** Adds and seals one at a time, so a seal's swap never loses an add made while it ran. */
  #lock: Promise<unknown> = Promise.resolve();

  constructor(
    base: ShardedIndex,
    /** The deleted ids (a live view: the updates' own set). */
    private readonly tombstones: ReadonlySet<number>,
  ) {
    this.#view = { base, sealed: [], growing: undefined };
    // Ids the shards hold (after `index --rebuild`, added ones too) are never added again.
    this.#sealedTo = base.ntotal;
  }

  /** The built shards searched now (a compaction's or rebuild's generation once `rebase` took it). */
  get base(): ShardedIndex {
    return this.#view.base;
  }

  get dim(): number {
    return this.base.dim;
  }

  get manifest(): ShardedIndex['manifest'] {
    return this.base.manifest;
  }

  get metric(): Metric {
    return this.base.metric;
  }

  /** Vectors in the growing segment (deleted ones included until compaction). */
  get segmentSize(): number {
    return this.#view.growing?.ntotal ?? 0;
  }

  /** Ids below this are in the shards or in the sealed segments searched. */
  get sealedTo(): number {
    return this.#sealedTo;
  }

  /** The sealed segments searched beside the shards. */
  get sealed(): readonly OpenSegment[] {
    return this.#view.sealed;
  }

  /** Adds vectors (n x dim, row-major) under their ids to the growing segment. */
  add(vectors: Float32Array, ids: readonly number[]): Promise<void> {
    return this.#serial(async () => {
      const keep = ids.flatMap((id, i) => (id >= this.#sealedTo && !this.#held.has(id) ? [i] : []));
      if (keep.length === 0) return;
      const dim = this.dim;
      const rows: Rows =
        keep.length === ids.length
          ? { ids: [...ids], vectors: vectors.slice(0, ids.length * dim) }
          : { ids: keep.map((i) => ids[i] as number), vectors: gatherRows(vectors, keep, dim) };
      const growing = this.#view.growing ?? createIndex('IDMap,Flat', dim, this.metric);
      await growing.add(
        rows.vectors,
        BigInt64Array.from(rows.ids, (id) => BigInt(id)),
      );
      this.#rows.push(rows);
      for (const id of rows.ids) this.#held.add(id);
      if (this.#view.growing !== growing) this.#view = { ...this.#view, growing };
    });
  }

  /**
   * Puts a sealed segment (ids first .. first + count - 1) in service: searches see it at once, and the
   * growing segment is rebuilt without its ids (the last step of a seal, or a restart's load).
   */
  adopt(segment: OpenSegment): Promise<void> {
    return this.#serial(async () => {
      // Adopted already (a seal this process recorded, read back from the updates): kept once.
      if (segment.info.first < this.#sealedTo) return closeSegment(segment);
      const end = segment.info.first + segment.info.count;
      this.#sealedTo = Math.max(this.#sealedTo, end);
      const growing = await this.#keepRows((id) => id >= end || id < segment.info.first);
      this.#view = { ...this.#view, sealed: [...this.#view.sealed, segment], growing: growing.next };
      await growing.old?.close();
    });
  }

  /**
   * Serves `next` (the index's shards after a compaction or rebuild, which hold every id below its ntotal)
   * in place of the shards searched now: sealed segments and growing rows below that count go (a
   * compaction folds them in), later ones stay. Resolves, once the searches that were running have
   * finished and what it retired here is closed, to the retired shards, for the caller to close once
   * nothing else (a job) reads them.
   */
  async rebase(next: ShardedIndex): Promise<ShardedIndex> {
    const retired = await this.#serial(async () => {
      const folded = next.ntotal;
      this.#sealedTo = Math.max(this.#sealedTo, folded);
      const growing = await this.#keepRows((id) => id >= folded);
      const { base, sealed } = this.#view;
      const gone = sealed.filter((s) => s.info.first < folded);
      this.#view = {
        base: next,
        sealed: sealed.filter((s) => s.info.first >= folded),
        growing: growing.next,
      };
      return { base, gone, growing: growing.old, running: [...this.#running] };
    });
    // A segment's exact vectors close at once (FAISS defers only its own close): after the searches on them.
    await Promise.all(retired.running);
    await Promise.all([retired.growing?.close(), ...retired.gone.map(closeSegment)]);
    return retired.base;
  }

  /** The growing segment rebuilt from the rows whose ids `keep` (the new one, and the one it replaces). */
  async #keepRows(
    keep: (id: number) => boolean,
  ): Promise<{ next: FaissIndex | undefined; old: FaissIndex | undefined }> {
    const kept = this.#rows.flatMap((r) => {
      const at = r.ids.flatMap((id, i) => (keep(id) ? [i] : []));
      if (at.length === r.ids.length) return [r];
      return at.length === 0
        ? []
        : [{ ids: at.map((i) => r.ids[i] as number), vectors: gatherRows(r.vectors, at, this.dim) }];
    });
    const old = this.#view.growing;
    if (kept.length === this.#rows.length && kept.every((r, i) => r === this.#rows[i])) {
      return { next: old, old: undefined };
    }
    let next: FaissIndex | undefined;
    if (kept.length > 0) {
      next = createIndex('IDMap,Flat', this.dim, this.metric);
      for (const r of kept) {
        await next.add(
          r.vectors,
          BigInt64Array.from(r.ids, (id) => BigInt(id)),
        );
      }
    }
    this.#rows = kept;
    this.#held = new Set(kept.flatMap((r) => r.ids));
    return { next, old };
  }

  /** The growing segment's rows with ids from `first` on, in id order (what a seal writes). */
  growingFrom(first: number): { first: number; ids: number[]; vectors: Float32Array } {
    const dim = this.dim;
    const all = this.#rows.flatMap((r) => r.ids.map((id, i) => ({ id, r, i }))).filter((x) => x.id >= first);
    all.sort((a, b) => a.id - b.id);
    const vectors = new Float32Array(all.length * dim);
    all.forEach((x, j) => {
      vectors.set(x.r.vectors.subarray(x.i * dim, (x.i + 1) * dim), j * dim);
    });
    return { first, ids: all.map((x) => x.id), vectors };
  }

  search(queries: Float32Array, k: number, options: ShardSearchParams = {}): Promise<SearchResult> {
    const search = this.#search(queries, k, options);
    const settled = search.then(
      () => undefined,
      () => undefined,
    );
    this.#running.add(settled);
    void settled.then(() => this.#running.delete(settled));
    return search;
  }

  async #search(queries: Float32Array, k: number, options: ShardSearchParams): Promise<SearchResult> {
    const view = this.#view;
    // Deletes a rebuild or compaction applied (`removed`) are in no shard: only the rest can take a slot.
    const dead = Math.max(0, this.tombstones.size - (view.base.manifest.removed ?? 0));
    if (dead === 0 && view.growing === undefined && view.sealed.length === 0) {
      const direct = await view.base.search(queries, k, options);
      // A delete that landed while it ran: searched again below, filtered (an answer never comes back short).
      if (!direct.ids.some((id) => id >= 0n && this.tombstones.has(Number(id)))) return direct;
    }
    const exclude = this.#exclusion(view);
    const result = await this.#searchParts(view, queries, k, options, exclude ? 0 : dead, exclude);
    return exclude === undefined ? result : this.#fillShort(view, queries, k, options, exclude, result);
  }

  /**
   * The deleted ids as the bitmap FAISS skips inside the search (tombstones.ts); undefined when the set
   * has no bitmap or the shards cannot take a selector (fast-scan): then the search over-fetches.
   */
  #exclusion(view: View): Uint8Array | undefined {
    if (!(this.tombstones instanceof TombstoneSet) || this.tombstones.size === 0) return undefined;
    return /x4fs/.test(view.base.manifest.factory) ? undefined : this.tombstones.bitmap;
  }

  /** Shards, sealed segments and the growing one, searched `k + overfetch` deep and merged without the deleted. */
  async #searchParts(
    view: View,
    queries: Float32Array,
    k: number,
    options: ShardSearchParams,
    overfetch: number,
    exclude: Uint8Array | undefined,
  ): Promise<SearchResult> {
    const n = queries.length / this.dim;
    const deep = k + Math.min(overfetch, MAX_OVERFETCH);
    const opts = exclude === undefined ? options : { ...options, exclude };
    // Sealed segments are searched at the shards' settings and re-scored from their exact vectors.
    const plan = view.base.searchPlan(deep, opts, true);
    const parts = await Promise.all([
      view.base.search(queries, deep, opts),
      ...view.sealed.map((s) => searchSegment(s, queries, deep, plan.fetch, plan.params, this.metric)),
      ...(view.growing ? [view.growing.search(queries, deep, exclude === undefined ? {} : { exclude })] : []),
    ]);
    const better = this.metric === 'ip' ? (a: number, b: number) => b - a : (a: number, b: number) => a - b;
    const distances = new Float32Array(n * k);
    const ids = new BigInt64Array(n * k).fill(-1n);
    for (let q = 0; q < n; q++) {
      const row: Array<{ id: bigint; d: number }> = [];
      for (const r of parts) {
        for (let j = 0; j < deep; j++) {
          const id = r.ids[q * deep + j] as bigint;
          if (id >= 0n && !this.tombstones.has(Number(id)))
            row.push({ id, d: r.distances[q * deep + j] as number });
        }
      }
      row.sort((x, y) => better(x.d, y.d));
      row.slice(0, k).forEach((h, j) => {
        ids[q * k + j] = h.id;
        distances[q * k + j] = h.d;
      });
    }
    return { distances, ids };
  }

  /**
   * An IVF search skips deleted ids inside the lists it visits, so a query whose nearest lists hold mostly
   * deleted sentences comes back short of k: those queries are searched again visiting 4x the lists, up to
   * every list (FAISS clamps nprobe to nlist).
   */
  async #fillShort(
    view: View,
    queries: Float32Array,
    k: number,
    options: ShardSearchParams,
    exclude: Uint8Array,
    result: SearchResult,
  ): Promise<SearchResult> {
    if (!/IVF/.test(view.base.manifest.factory)) return result;
    const dim = this.dim;
    let nprobe = view.base.searchPlan(k, options).params.nprobe ?? 1;
    for (let round = 0; round < 3; round++) {
      const short: number[] = [];
      for (let q = 0; q < result.ids.length / k; q++)
        if ((result.ids[q * k + k - 1] as bigint) < 0n) short.push(q);
      if (short.length === 0) break;
      nprobe *= 4;
      const again = await this.#searchParts(
        view,
        gatherRows(queries, short, dim),
        k,
        { ...options, nprobe },
        0,
        exclude,
      );
      short.forEach((q, i) => {
        result.ids.set(again.ids.subarray(i * k, (i + 1) * k), q * k);
        result.distances.set(again.distances.subarray(i * k, (i + 1) * k), q * k);
      });
    }
    return result;
  }

  async close(): Promise<void> {
    await this.#lock.catch(() => undefined);
    const view = this.#view;
    this.#view = { base: view.base, sealed: [], growing: undefined };
    this.#rows = [];
    this.#held.clear();
    await Promise.all([view.growing?.close(), ...view.sealed.map(closeSegment)]);
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#lock.then(work, work);
    this.#lock = next.catch(() => undefined);
    return next;
  }
}

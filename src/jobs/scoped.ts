/**
 * Candidate scopes of a mining job, as the papers drew them: only sentences sharing a metadata value with
 * the query (`withinGroup`: same paper, trend, URL, cited paper, defined term), only sentences within a
 * window on an ordered key (`window`: news within 7 days), and never sentences sharing a value under the
 * `excludeSame` keys (same section). A scope is searched on its own members, never by scanning the index:
 * the group tables give the members, and a scope up to `exactMax` members is searched exactly over the
 * kept embeddings (vectors.f16, a temporary flat index); a larger one through the index with an id
 * selector, when the index can take one (see BENCHMARKS.md for where the two cost the same).
 *
 * Queries of a batch that share a scope share one search. Candidates are taken best first, then the ones
 * a query may not pair with (itself, outside its window, same excluded value) are dropped and, where too
 * few remain, the scope is searched deeper.
 */
import { ParamineError } from '../errors.js';
import { gatherRows, type VectorFile } from '../index/index.js';
import { createIndex, type FaissIndex } from '../native/index.js';
import type { Hit } from '../search/candidates.js';
import type { GroupOrder, GroupValue, GroupView, Meta, SentenceStore } from '../store/index.js';
import { groupValuesOf } from '../store/index.js';
import { type AddedSentences, type QueryBatch, vectorsForIds } from './queries.js';

const DAY_MS = 86_400_000;
/** Scopes up to this size are searched exactly by default (measured crossover, BENCHMARKS.md). */
export const DEFAULT_EXACT_MAX = 50_000;

export interface ScopeSpec {
  /** Keys whose shared values admit a pair (any of them); [] for none. */
  withinGroup: readonly string[];
  window?: { key: string; days?: number | undefined; width?: number | undefined } | undefined;
  excludeSame: readonly string[];
  exactMax: number;
  /** Document pairs: a sentence's candidates are the sentences of its document's partners. */
  docPairs?: { key: string; partners: ReadonlyMap<string, readonly string[]> } | undefined;
}

/** An index that can search only some ids (FAISS with an IDSelector). */
export interface SelectiveIndex {
  search(
    queries: Float32Array,
    k: number,
    options?: { nprobe?: number; recall?: number; ids?: BigInt64Array },
  ): Promise<{ distances: Float32Array; ids: BigInt64Array }>;
  readonly metric: 'ip' | 'l2';
  readonly supportsIdSelector?: boolean;
}

export interface ScopeParts {
  tables: GroupView | undefined;
  store: SentenceStore;
  vectors: VectorFile | undefined;
  /** Sentences added since the build: members of scopes too (their embeddings are in the updates). */
  added?: AddedSentences | undefined;
  embed: (texts: string[]) => Promise<Float32Array>;
  dim: number;
  ann?: SelectiveIndex | undefined;
  nprobe?: number | undefined;
  recall?: number | undefined;
}

/** Whether a job searches scopes (excludeSame alone filters a global search instead). */
export function hasScope(s: ScopeSpec): boolean {
  return s.withinGroup.length > 0 || s.window !== undefined || s.docPairs !== undefined;
}

/** Checks the scope against the index's group tables (4xx errors naming the field). */
export function checkScope(s: ScopeSpec, tables: GroupView | undefined): void {
  const missing = (key: string, field: string, ordered: boolean) => {
    if (tables === undefined) {
      throw new ParamineError(
        'BAD_INPUT',
        `the index has no group tables; build one with \`paramine groups build --index DIR --key ${key}${ordered ? ':date' : ''}\``,
        { field },
      );
    }
    tables.require(key, field, ordered);
  };
  for (const key of s.withinGroup) missing(key, 'withinGroup', false);
  if (s.docPairs !== undefined) missing(s.docPairs.key, 'docPairs.docKey', false);
  if (s.window !== undefined) missing(s.window.key, 'window.key', true);
}

interface Unit {
  /** What identifies the member set (the flat index of the last one is reused). */
  key: string;
  /** Query rows of the batch that share this scope. */
  rows: number[];
  /** The scope's members, ascending. */
  ids: number[];
  /** Ordered value per member (windows only). */
  order?: Map<number, number>;
}

export class ScopedSearch {
  private cached: { key: string; index: FaissIndex } | undefined;
  private readonly orders: Map<string, GroupOrder>;

  constructor(
    private readonly spec: ScopeSpec,
    private readonly parts: ScopeParts,
  ) {
    this.orders = new Map((parts.tables?.list() ?? []).map((i) => [i.key, i.order]));
  }

  /** The window's half-width in the key's units (ms for dates). */
  private get halfWidth(): number {
    const w = this.spec.window;
    if (w === undefined) return 0;
    return w.days !== undefined ? w.days * DAY_MS : (w.width ?? 0);
  }

  private valuesOf(key: string, text: string, meta: Meta | undefined): GroupValue[] {
    const order = this.orders.get(key) ?? 'none';
    return groupValuesOf({ key, order }, meta === undefined ? { text } : { text, meta });
  }

  /** Rows of hits within each query's scope, best first, at most `depth` each. */
  async hits(batch: QueryBatch, depth: number): Promise<Hit[][]> {
    const rows: Hit[][] = batch.texts.map(() => []);
    for (const unit of this.units(batch)) {
      const found = await this.searchUnit(unit, batch, depth);
      unit.rows.forEach((q, i) => {
        rows[q] = found[i] as Hit[];
      });
    }
    return rows;
  }

  /** Groups the batch's queries by the scope they search. */
  private units(batch: QueryBatch): Unit[] {
    const tables = this.parts.tables as GroupView;
    const byKey = new Map<string, Unit>();
    const window = this.spec.window;
    const windowed: number[] = [];
    const pairs = this.spec.docPairs;
    /** Query q searches the unit `key`; its ids are gathered the first time the unit is seen. */
    const enter = (key: string, q: number, ids: () => number[]) => {
      let u = byKey.get(key);
      if (u === undefined) {
        u = { key, rows: [], ids: [...new Set(ids())].sort((a, b) => a - b) };
        byKey.set(key, u);
      }
      u.rows.push(q);
    };
    batch.texts.forEach((text, q) => {
      const meta = batch.metas[q];
      if (pairs !== undefined) {
        const doc = this.valuesOf(pairs.key, text, meta)[0];
        const partners = doc === undefined ? [] : (pairs.partners.get(String(doc)) ?? []);
        if (partners.length === 0) return;
        enter(`d:${String(doc)}`, q, () => partners.flatMap((p) => tables.ids(pairs.key, p)));
      } else if (this.spec.withinGroup.length > 0) {
        const tagged = this.spec.withinGroup.flatMap((k) =>
          this.valuesOf(k, text, meta).map((v) => [k, v] as const),
        );
        if (tagged.length === 0) return;
        const key = JSON.stringify(tagged.map(([k, v]) => `${k}=${String(v)}`).sort());
        enter(`g:${key}`, q, () => tagged.flatMap(([k, v]) => tables.ids(k, v)));
      } else if (window !== undefined) {
        if (this.valuesOf(window.key, text, meta).length > 0) windowed.push(q);
      }
    });
    const units = [...byKey.values()];
    if (this.spec.withinGroup.length === 0 && window !== undefined && windowed.length > 0) {
      // One unit over the batch's whole window span; each query keeps only its own window (admit()).
      const vs = windowed.flatMap((q) => this.valuesOf(window.key, batch.texts[q] as string, batch.metas[q]));
      const lo = Math.min(...(vs as number[])) - this.halfWidth;
      const hi = Math.max(...(vs as number[])) + this.halfWidth;
      const entries = tables.between(window.key, lo, hi);
      const order = new Map(entries.map((e) => [e.id, e.value]));
      const ids = [...order.keys()].sort((a, b) => a - b);
      units.push({ key: `w:${lo}:${hi}`, rows: windowed, ids, order });
    } else if (window !== undefined) {
      for (const u of units) u.order = this.orderOf(u.ids);
    }
    return units;
  }

  /** Ordered values of ids (windows inside groups): read from the store. */
  private orderOf(ids: readonly number[]): Map<number, number> {
    const key = this.spec.window?.key as string;
    const out = new Map<number, number>();
    for (const id of ids) {
      const r = this.parts.store.get(id);
      const v = r === undefined ? undefined : this.valuesOf(key, r.text, r.meta)[0];
      if (typeof v === 'number') out.set(id, v);
    }
    return out;
  }

  private async searchUnit(unit: Unit, batch: QueryBatch, depth: number): Promise<Hit[][]> {
    const dim = this.parts.dim;
    const queries = new Float32Array(unit.rows.length * dim);
    unit.rows.forEach((q, i) => {
      queries.set(batch.vectors.subarray(q * dim, (q + 1) * dim), i * dim);
    });
    const admit = this.admitter(unit, batch);
    const out: Hit[][] = unit.rows.map(() => []);
    let pending = unit.rows.map((_, i) => i);
    // Deep enough for the query itself and a few excluded ones; deeper only for rows left short.
    let k = Math.min(unit.ids.length, depth + 4);
    for (;;) {
      const sub = gatherRows(queries, pending, dim);
      const res = await this.search(unit, sub, k);
      const short: number[] = [];
      pending.forEach((i, j) => {
        const row: Hit[] = [];
        let full = true;
        for (let r = 0; r < k && row.length < depth; r++) {
          const id = Number(res.ids[j * k + r]);
          if (id < 0) {
            full = false;
            break;
          }
          if (admit(unit.rows[i] as number, id)) {
            row.push({ id, cosine: res.cosines[j * k + r] as number, annRank: row.length + 1 });
          }
        }
        out[i] = row;
        if (row.length < depth && full && k < unit.ids.length) short.push(i);
      });
      if (short.length === 0) return out;
      pending = short;
      k = Math.min(unit.ids.length, k * 4);
    }
  }

  /** Whether query row q may pair with id: not itself, inside its window, no excluded value shared. */
  private admitter(unit: Unit, batch: QueryBatch): (q: number, id: number) => boolean {
    const excluded = this.spec.excludeSame.map((key) => ({
      key,
      of: new Map<number, Set<string>>(),
    }));
    const queryValues = (q: number, key: string) =>
      new Set(this.valuesOf(key, batch.texts[q] as string, batch.metas[q]).map(String));
    const window = this.spec.window;
    const w = this.halfWidth;
    return (q, id) => {
      if (batch.ids[q] === id) return false;
      if (window !== undefined) {
        const vq = this.valuesOf(window.key, batch.texts[q] as string, batch.metas[q])[0] as
          | number
          | undefined;
        const vc = unit.order?.get(id);
        if (vq === undefined || vc === undefined || Math.abs(vc - vq) > w) return false;
      }
      if (excluded.length > 0) {
        const r = this.parts.store.get(id);
        for (const e of excluded) {
          const mine = queryValues(q, e.key);
          if (mine.size === 0 || r === undefined) continue;
          for (const v of this.valuesOf(e.key, r.text, r.meta)) if (mine.has(String(v))) return false;
        }
      }
      return true;
    };
  }

  /** The k best members for each query row: exactly (flat over kept embeddings) or through the index. */
  private async search(
    unit: Unit,
    queries: Float32Array,
    k: number,
  ): Promise<{ ids: BigInt64Array; cosines: Float32Array }> {
    const ann = this.parts.ann;
    // The shards do not hold added sentences: a scope with some is searched exactly whatever its size.
    const base = this.parts.added?.base ?? Number.POSITIVE_INFINITY;
    const hasAdded = (unit.ids.at(-1) ?? -1) >= base;
    if (unit.ids.length > this.spec.exactMax && ann?.supportsIdSelector && !hasAdded) {
      const r = await ann.search(queries, k, {
        ids: BigInt64Array.from(unit.ids, (x) => BigInt(x)),
        ...(this.parts.nprobe === undefined ? {} : { nprobe: this.parts.nprobe }),
        ...(this.parts.recall === undefined ? {} : { recall: this.parts.recall }),
      });
      const cosines = ann.metric === 'ip' ? r.distances : r.distances.map((d) => 1 - d / 2);
      return { ids: r.ids, cosines };
    }
    const index = await this.flatOf(unit.key, unit.ids);
    const r = await index.search(queries, k);
    return { ids: r.ids, cosines: r.distances };
  }

  /** A flat inner-product index over the members' embeddings; the last one is kept for the next batch. */
  private async flatOf(key: string, ids: readonly number[]): Promise<FaissIndex> {
    if (this.cached?.key === key) return this.cached.index;
    await this.close();
    const { store, vectors: kept, added, dim, embed } = this.parts;
    const vectors = await vectorsForIds(
      { store, vectors: kept, added, ntotal: 0, encoder: { dim, encode: (t) => embed([...t]) } },
      ids,
    );
    const index = createIndex('Flat', this.parts.dim, 'ip');
    await index.add(
      vectors,
      BigInt64Array.from(ids, (x) => BigInt(x)),
    );
    this.cached = { key, index };
    return index;
  }

  async close(): Promise<void> {
    const c = this.cached;
    this.cached = undefined;
    await c?.index.close();
  }
}

/**
 * Build phase 2 and 3: fill pieces of the collection into clones of the one trained, empty index, then
 * merge pieces into shards. Each piece depends only on the trained index and its id range, so pieces can
 * be filled anywhere, in any order, in parallel (one job per piece in a distributed build) and retried.
 *
 *   const template = await readIndex('trained.faiss');                    // or trainIndex(...)
 *   const piece = await fillPiece({ template, source, first, count });    // ids first..first+count-1
 *   await writeIndexFile(piece, 'piece-0007.faiss'); await piece.close();
 *   const shard = await mergePieces(template, ['piece-0006.faiss', 'piece-0007.faiss']);
 *
 * Memory: a piece holds its own codes and ids (inverted lists grow by doubling: up to 2x) plus two read
 * batches; mergePieces holds the shard and one piece at a time. fillShards runs at most `jobs` pieces at
 * once, so a build's peak is jobs x one shard's working set, not the collection.
 */
import { replaceFile } from '../durable.js';
import { ParamineError } from '../errors.js';
import { type FaissIndex, readIndex } from '../native/index.js';
import type { IndexPlan } from './plan.js';
import { type VectorSource, withoutIds } from './source.js';
import { DEFAULT_SEED, trainIndex } from './train.js';

export interface FillOptions {
  /** Trained and empty: the piece is a clone of it. */
  template: FaissIndex;
  source: VectorSource;
  /** Ids first .. first + count - 1 (id = row of the source). */
  first: number;
  count: number;
  /** Vectors per add call (default 65,536: 96 MiB of float32 at d = 384; two in flight). */
  batch?: number;
  /** Called after each batch with the piece's vector count. */
  onProgress?: (added: number) => void;
  /** Ids left out (deleted sentences a rebuild applies for good). */
  skip?: ReadonlySet<number> | undefined;
}

function ids(first: number, count: number): BigInt64Array {
  const out = new BigInt64Array(count);
  for (let i = 0; i < count; i++) out[i] = BigInt(first + i);
  return out;
}

/** A clone of the template holding rows [first, first + count) of the source under their ids. */
export async function fillPiece(o: FillOptions): Promise<FaissIndex> {
  if (!o.template.isTrained)
    throw new ParamineError('INDEX_NOT_TRAINED', 'fillPiece: the template is not trained');
  if (o.template.ntotal > 0) throw new ParamineError('BAD_INPUT', 'fillPiece: the template must be empty');
  if (!Number.isSafeInteger(o.first) || !Number.isSafeInteger(o.count) || o.first < 0 || o.count < 0) {
    throw new ParamineError('BAD_INPUT', `fillPiece: bad range ${o.first} + ${o.count}`);
  }
  if (o.first + o.count > o.source.count) {
    throw new ParamineError('BAD_INPUT', `fillPiece: rows up to ${o.first + o.count} of ${o.source.count}`);
  }
  const batch = Math.max(1, o.batch ?? 65_536);
  const piece = await o.template.cloneEmpty();
  try {
    const end = o.first + o.count;
    // Read the next batch while FAISS adds this one.
    let next = o.count > 0 ? o.source.read(o.first, Math.min(batch, o.count)) : undefined;
    for (let at = o.first; at < end; at += batch) {
      const n = Math.min(batch, end - at);
      const vectors = await (next as Promise<Float32Array>);
      const following = at + n < end ? o.source.read(at + n, Math.min(batch, end - at - n)) : undefined;
      following?.catch(() => {}); // surfaced when awaited
      next = following;
      const [kept, keptIds] = withoutIds(vectors, ids(at, n), o.skip);
      if (keptIds.length > 0) await piece.add(kept, keptIds);
      o.onProgress?.(at + n - o.first);
    }
    return piece;
  } catch (e) {
    await piece.close();
    throw e;
  }
}

/**
 * One shard over every row of `source` (id = row): `plan` trained on the rows `sample` names, filled,
 * written durably to `path`. Returns the training and filling times (ms).
 */
export async function writeOneShard(
  path: string,
  plan: IndexPlan,
  source: VectorSource,
  sample: readonly number[],
  options: { seed?: number; threads?: number; skip?: ReadonlySet<number> } = {},
): Promise<{ trainMs: number; fillMs: number }> {
  const seed = options.seed ?? DEFAULT_SEED;
  let t0 = performance.now();
  const template = await trainIndex({
    plan,
    dim: plan.dim,
    metric: plan.metric,
    source,
    sampleIds: sample,
    seed,
    ...(options.threads === undefined ? {} : { threads: options.threads }),
  });
  const trainMs = performance.now() - t0;
  try {
    t0 = performance.now();
    const shard = await fillPiece({ template, source, first: 0, count: source.count, skip: options.skip });
    const fillMs = performance.now() - t0;
    try {
      await writeIndexFile(shard, path);
    } finally {
      await shard.close();
    }
    return { trainMs, fillMs };
  } finally {
    await template.close();
  }
}

/** Writes an index durably under `path` (temporary name, then rename). */
export async function writeIndexFile(index: FaissIndex, path: string): Promise<void> {
  await replaceFile(path, (tmp) => index.write(tmp));
}

/**
 * One index holding every vector of the piece files (written by fillPiece from clones of `template`):
 * a fresh clone of the template, each piece read, moved in (FAISS merge_from) and freed in turn.
 */
export async function mergePieces(template: FaissIndex, pieces: readonly string[]): Promise<FaissIndex> {
  const into = await template.cloneEmpty();
  try {
    for (const path of pieces) {
      const piece = await readIndex(path);
      try {
        await into.merge(piece);
      } finally {
        await piece.close();
      }
    }
    return into;
  } catch (e) {
    await into.close();
    throw e;
  }
}

export interface Range {
  first: number;
  count: number;
}

/** `parts` contiguous ranges covering [0, n), sizes differing by at most one. */
export function splitRange(n: number, parts: number): Range[] {
  const p = Math.max(1, Math.min(parts, Math.max(n, 1)));
  return Array.from({ length: p }, (_, i) => {
    const first = Math.floor((i * n) / p);
    return { first, count: Math.floor(((i + 1) * n) / p) - first };
  });
}

export interface FillShardsOptions extends Omit<FillOptions, 'first' | 'count' | 'onProgress'> {
  ranges: readonly Range[];
  /** Shards filled at once (default 1; FAISS parallelizes each add over its threads already). */
  jobs?: number;
  /** Shards already done (a resumed build): skipped. */
  skip?: ReadonlySet<number>;
  /** Persists a filled shard (e.g. writeIndexFile); the shard is closed right after. */
  save: (shard: number, index: FaissIndex) => Promise<void>;
  /** Vectors added so far over all shards of this call. */
  onProgress?: (added: number) => void;
  /** Shards in memory right now (filled or being filled): for tests of the memory bound. */
  onLive?: (live: number) => void;
}

/** Fills and saves every range not skipped, at most `jobs` at a time; resolves when all are saved. */
export async function fillShards(o: FillShardsOptions): Promise<void> {
  const todo = o.ranges.map((r, i) => ({ ...r, i })).filter((r) => !o.skip?.has(r.i));
  const jobs = Math.max(1, Math.min(o.jobs ?? 1, todo.length));
  let next = 0;
  let live = 0;
  let failed = false;
  const added = new Map<number, number>();
  const report = () => o.onProgress?.([...added.values()].reduce((a, b) => a + b, 0));
  const worker = async () => {
    while (next < todo.length && !failed) {
      const r = todo[next++] as (typeof todo)[number];
      o.onLive?.(++live);
      let piece: FaissIndex | undefined;
      try {
        piece = await fillPiece({
          template: o.template,
          source: o.source,
          first: r.first,
          count: r.count,
          ...(o.batch === undefined ? {} : { batch: o.batch }),
          onProgress: (n) => {
            added.set(r.i, n);
            report();
          },
        });
        await o.save(r.i, piece);
      } catch (e) {
        failed = true; // the other jobs finish their current shard and stop
        throw e;
      } finally {
        await piece?.close();
        o.onLive?.(--live);
      }
    }
  };
  await Promise.all(Array.from({ length: jobs }, worker));
}

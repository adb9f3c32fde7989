/**
 * An index directory: manifest.json plus shard-NNN.faiss files that share one trained coarse quantizer and
 * codebook. Queries fan out to every shard at once and the per-shard top-k lists are merged.
 */
import { mkdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ParamineError } from '../errors.js';
import {
  type FaissIndex,
  faissVersion,
  type Metric,
  readIndex,
  type SearchOptions,
  type SearchResult,
} from '../native/index.js';
import {
  MANIFEST_FILE,
  MANIFEST_FORMAT,
  MANIFEST_VERSION,
  type Manifest,
  readManifest,
  shardFileName,
  writeManifest,
} from './manifest.js';
import { mergeTopK } from './topk.js';

export interface ModelRef {
  id: string;
  /** sha256 of the model's ONNX file (lowercase hex). */
  sha256: string;
}

export interface OpenOptions {
  /** The model queries will be embedded with: refused with MODEL_MISMATCH unless its sha256 matches. */
  model?: Pick<ModelRef, 'sha256'> & Partial<Pick<ModelRef, 'id'>>;
  /** The query dimension: refused with DIM_MISMATCH unless it matches. */
  dim?: number;
  /**
   * Map the shards' IVF inverted lists instead of reading them: read-only, pages loaded on demand. Flat
   * shards are read whole either way. Shard files are replaced by rename, so a mapped file never changes.
   */
  mmap?: boolean;
}

export class ShardedIndex {
  readonly manifest: Manifest;
  readonly dir: string;
  readonly #shards: FaissIndex[];

  private constructor(dir: string, manifest: Manifest, shards: FaissIndex[]) {
    this.dir = dir;
    this.manifest = manifest;
    this.#shards = shards;
  }

  /** Opens `dir` after checking its manifest against the expected model and dimension. */
  static async open(dir: string, options: OpenOptions = {}): Promise<ShardedIndex> {
    const manifest = await readManifest(dir);
    if (options.model && options.model.sha256.toLowerCase() !== manifest.model.sha256) {
      throw new ParamineError(
        'MODEL_MISMATCH',
        `index ${dir} was built with model ${manifest.model.id} (sha256 ${manifest.model.sha256.slice(0, 12)}…), ` +
          `not ${options.model.id ?? 'the given model'} (sha256 ${options.model.sha256.slice(0, 12)}…)`,
        { field: 'model' },
      );
    }
    if (options.dim !== undefined && options.dim !== manifest.dim) {
      throw new ParamineError(
        'DIM_MISMATCH',
        `index ${dir} holds ${manifest.dim}-d vectors, not ${options.dim}-d`,
        {
          field: 'dim',
        },
      );
    }
    const opened = await Promise.allSettled(
      manifest.shards.map((s) => readIndex(join(dir, s.file), { mmap: options.mmap === true })),
    );
    const shards = opened.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    try {
      if (failed) throw failed.reason;
      manifest.shards.forEach((s, i) => {
        const shard = shards[i]!;
        const where = `${dir}/${s.file}`;
        if (shard.dim !== manifest.dim) {
          throw new ParamineError('BAD_FILE', `${where}: ${shard.dim}-d, manifest says ${manifest.dim}-d`);
        }
        if (shard.metric !== manifest.metric) {
          throw new ParamineError(
            'BAD_FILE',
            `${where}: metric ${shard.metric}, manifest says ${manifest.metric}`,
          );
        }
        if (shard.ntotal !== s.count) {
          throw new ParamineError('BAD_FILE', `${where}: ${shard.ntotal} vectors, manifest says ${s.count}`);
        }
      });
    } catch (e) {
      await Promise.all(shards.map((s) => s.close()));
      throw e;
    }
    return new ShardedIndex(dir, manifest, shards);
  }

  get dim(): number {
    return this.manifest.dim;
  }
  get metric(): Metric {
    return this.manifest.metric;
  }
  get ntotal(): number {
    return this.#shards.reduce((s, x) => s + x.ntotal, 0);
  }
  /** Whether searches can take an id selector (`ids`): every factory but fast-scan IVF. */
  get supportsIdSelector(): boolean {
    return !/fs\b|fsr\b/.test(this.manifest.factory);
  }

  get shardCount(): number {
    return this.#shards.length;
  }

  /**
   * k nearest neighbours of each query row over all shards. nprobe/kFactor default to the manifest's.
   * Every shard returns its own top k; the merged top k is therefore exact with respect to the shards.
   */
  async search(queries: Float32Array, k: number, options: SearchOptions = {}): Promise<SearchResult> {
    const merged: SearchOptions = {
      nprobe: options.nprobe ?? this.manifest.search.nprobe,
      kFactor: options.kFactor ?? this.manifest.search.kFactor,
      ...(options.ids === undefined ? {} : { ids: options.ids }),
    };
    const parts = await Promise.all(this.#shards.map((s) => s.search(queries, k, merged)));
    if (parts.length === 1) return parts[0]!;
    return mergeTopK(parts, queries.length / this.dim, k, this.metric);
  }

  async close(): Promise<void> {
    await Promise.all(this.#shards.map((s) => s.close()));
  }
}

export interface WriteOptions {
  model: ModelRef;
  /** Recorded under `build` in the manifest (factory plan, corpus, timings...). */
  build?: Record<string, unknown>;
  /** Query defaults; default nprobe 32 (clamped to nlist) and kFactor 8 for refine factories, else 1. */
  search?: { nprobe?: number; kFactor?: number };
  /** Replace an existing index in `dir` (default: refuse with CONFLICT). */
  overwrite?: boolean;
  /**
   * The kept embeddings, already written to `dir` (vectors.ts): recorded in the manifest after checking
   * the file's size against count x dim.
   */
  vectors?: Manifest['vectors'];
}

/** Writes shard files (temp name + rename) and then the manifest; returns the manifest written. */
export async function writeShardedIndex(
  dir: string,
  shards: readonly FaissIndex[],
  info: { factory: string; dim: number; metric: Metric },
  options: WriteOptions,
): Promise<Manifest> {
  if (shards.length === 0) throw new ParamineError('BAD_INPUT', 'no shards to write');
  await mkdir(dir, { recursive: true });
  if (!options.overwrite && (await exists(join(dir, MANIFEST_FILE)))) {
    throw new ParamineError('CONFLICT', `${dir} already holds an index (pass overwrite to replace it)`);
  }
  const ntotal = shards.reduce((s, x) => s + x.ntotal, 0);
  if (options.vectors) await checkVectors(dir, options.vectors, ntotal, info.dim);
  const files = shards.map((_, i) => shardFileName(i));
  await Promise.all(
    shards.map(async (shard, i) => {
      const path = join(dir, files[i]!);
      const tmp = `${path}.tmp-${process.pid}`;
      await shard.write(tmp);
      await rename(tmp, path);
    }),
  );
  const nlist = shards[0]!.nlist;
  const refine = info.factory.includes(',R');
  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    version: MANIFEST_VERSION,
    dim: info.dim,
    metric: info.metric,
    factory: info.factory,
    model: { id: options.model.id, sha256: options.model.sha256.toLowerCase() },
    ntotal,
    shards: shards.map((s, i) => ({ file: files[i]!, count: s.ntotal })),
    search: {
      nprobe: options.search?.nprobe ?? Math.min(nlist ?? 1, 32),
      kFactor: options.search?.kFactor ?? (refine ? 8 : 1),
    },
    build: options.build ?? {},
    ...(options.vectors ? { vectors: options.vectors } : {}),
    faissVersion: faissVersion(),
    createdAt: new Date().toISOString(),
  };
  await writeManifest(dir, manifest);
  return manifest;
}

async function checkVectors(
  dir: string,
  vectors: NonNullable<Manifest['vectors']>,
  ntotal: number,
  dim: number,
): Promise<void> {
  if (vectors.count !== ntotal || vectors.dim !== dim) {
    throw new ParamineError(
      'BAD_INPUT',
      `vectors are ${vectors.count} x ${vectors.dim}, the index ${ntotal} x ${dim}`,
      { field: 'vectors' },
    );
  }
  const path = join(dir, vectors.file);
  const size = await stat(path).then(
    (s) => s.size,
    () => -1,
  );
  const expected = vectors.count * vectors.dim * 2;
  if (size !== expected) {
    throw new ParamineError(
      'BAD_INPUT',
      size < 0 ? `${path} is missing` : `${path}: ${size} bytes, expected ${expected}`,
      { field: 'vectors' },
    );
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

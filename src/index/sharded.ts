/**
 * An index directory: manifest.json plus shard-NNN.faiss files that share one trained coarse quantizer and
 * codebook. Queries fan out to every shard at once and the per-shard top-k lists are merged.
 */
import { mkdir, stat } from 'node:fs/promises';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { pathExists, replaceFile } from '../durable.js';
import { ParamineError } from '../errors.js';
import {
  type AnnSearchParams,
  type FaissIndex,
  faissVersion,
  HalfVectors,
  type Metric,
  maxK,
  readIndex,
  type SearchResult,
} from '../native/index.js';
import { fileDigest, type VerifyMode, verifyChecksums } from './checksums.js';
import {
  MANIFEST_FILE,
  MANIFEST_FORMAT,
  MANIFEST_VERSION,
  type Manifest,
  pickOperatingPoint,
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
   * Default 'auto': mapped when the shard files together exceed `mmapAboveBytes`.
   */
  mmap?: boolean | 'auto';
  /** The 'auto' threshold (default: a quarter of the machine's RAM, at most 8 GiB). */
  mmapAboveBytes?: number;
  /** Check the files against the manifest's checksums before opening them (default 'auto', checksums.ts). */
  verify?: VerifyMode;
}

/** Search parameters per call; each defaults to the manifest's. */
export interface ShardSearchParams extends AnnSearchParams {
  /**
   * Pick the cheapest measured operating point (manifest `operatingPoints`, see tune.ts) whose recall@10
   * reaches this; nprobe / efSearch / kFactor given beside it win. Exact (Flat) indexes ignore it.
   */
  recall?: number;
  /** Re-score with the exact vectors (indexes whose manifest says refine 'vectors'); default true there. */
  refine?: boolean;
}

async function shardBytes(dir: string, manifest: Manifest): Promise<number> {
  const sizes = await Promise.all(
    manifest.shards.map((s) =>
      stat(join(dir, s.file)).then(
        (x) => x.size,
        () => 0,
      ),
    ),
  );
  return sizes.reduce((a, b) => a + b, 0);
}

export class ShardedIndex {
  readonly manifest: Manifest;
  readonly dir: string;
  /** The inverted lists are memory-mapped (see OpenOptions.mmap). */
  readonly mmapped: boolean;
  readonly #shards: FaissIndex[];
  readonly #vectors: HalfVectors | undefined;

  private constructor(
    dir: string,
    manifest: Manifest,
    shards: FaissIndex[],
    mmapped: boolean,
    vectors?: HalfVectors,
  ) {
    this.dir = dir;
    this.manifest = manifest;
    this.mmapped = mmapped;
    this.#shards = shards;
    this.#vectors = vectors;
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
    await verifyChecksums(dir, manifest, options.verify ?? 'auto');
    const auto = options.mmapAboveBytes ?? Math.min(8 * 2 ** 30, totalmem() / 4);
    const mmap =
      options.mmap === 'auto' || options.mmap === undefined
        ? (await shardBytes(dir, manifest)) > auto
        : options.mmap;
    const opened = await Promise.allSettled(
      manifest.shards.map((s) => readIndex(join(dir, s.file), { mmap })),
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
    let vectors: HalfVectors | undefined;
    if (manifest.search.refine === 'vectors' && manifest.vectors) {
      try {
        vectors = await HalfVectors.open(join(dir, manifest.vectors.file), manifest.dim);
        if (vectors.count !== manifest.ntotal) {
          throw new ParamineError(
            'BAD_FILE',
            `${dir}/${manifest.vectors.file}: ${vectors.count} vectors, manifest says ${manifest.ntotal}`,
          );
        }
      } catch (e) {
        await Promise.all([...shards.map((s) => s.close()), vectors?.close()]);
        throw e;
      }
    }
    return new ShardedIndex(dir, manifest, shards, mmap, vectors);
  }

  get dim(): number {
    return this.manifest.dim;
  }
  get metric(): Metric {
    return this.manifest.metric;
  }
  /** The id space (ids 0 .. ntotal - 1): the shards' vectors plus the ids a rebuild removed. */
  get ntotal(): number {
    return this.#shards.reduce((s, x) => s + x.ntotal, 0) + (this.manifest.removed ?? 0);
  }
  /** Whether searches can take an id selector (`ids`): every factory but fast-scan IVF. */
  get supportsIdSelector(): boolean {
    return !/fs\b|fsr\b/.test(this.manifest.factory);
  }

  get shardCount(): number {
    return this.#shards.length;
  }

  /**
   * k nearest neighbours of each query row over all shards; parameters default to the manifest's. Every
   * shard returns its own top k (or k * kFactor candidates when re-scoring from vectors.f16: at most
   * max(k, MAX_K), then the exact top k of them); the merged top k is exact with respect to the shards.
   */
  async search(queries: Float32Array, k: number, options: ShardSearchParams = {}): Promise<SearchResult> {
    const rescore = this.#vectors !== undefined && options.refine !== false;
    const { params, fetch } = this.searchPlan(k, options, rescore);
    const nq = queries.length / this.dim;
    const parts = await Promise.all(this.#shards.map((s) => s.search(queries, fetch, params)));
    const merged = parts.length === 1 ? parts[0]! : mergeTopK(parts, nq, fetch, this.metric);
    return rescore ? (this.#vectors as HalfVectors).rescore(queries, merged.ids, k, this.metric) : merged;
  }

  /**
   * The shards' search parameters for a call (defaults from the manifest and its operating points) and
   * how many candidates each returns: k, or k * kFactor when they are re-scored exactly afterwards.
   */
  searchPlan(
    k: number,
    options: ShardSearchParams = {},
    rescore = this.#vectors !== undefined && options.refine !== false,
  ): { params: AnnSearchParams; fetch: number } {
    const d = { ...this.manifest.search, ...this.pointFor(options.recall) };
    const kFactor = options.kFactor ?? d.kFactor;
    const efSearch = options.efSearch ?? d.efSearch;
    const params: AnnSearchParams = {
      nprobe: options.nprobe ?? d.nprobe,
      // When re-scoring from vectors.f16 the shards already return k * kFactor candidates: a factory's
      // own refine stage would multiply them again (and k * kFactor^2 soon passes the native limit).
      ...(rescore ? {} : { kFactor }),
      ...(efSearch === undefined ? {} : { efSearch }),
      ...(options.ids === undefined ? {} : { ids: options.ids }),
      ...(options.exclude === undefined ? {} : { exclude: options.exclude }),
    };
    return { params, fetch: rescore ? Math.max(k, Math.min(Math.ceil(k * kFactor), maxK())) : k };
  }

  /**
   * An empty index with the build's trained quantizers (a clone of a shard without its vectors): what
   * added sentences are sealed into. A memory-mapped shard is read once more, unmapped, to clone it.
   */
  async template(): Promise<FaissIndex> {
    const shard = this.#shards[0] as FaissIndex;
    if (!shard.readOnly) return shard.cloneEmpty();
    const copy = await readIndex(join(this.dir, (this.manifest.shards[0] as { file: string }).file));
    try {
      return await copy.cloneEmpty();
    } finally {
      await copy.close();
    }
  }

  /** Up to `n` of the build's kept vectors, evenly spread (undefined without vectors.f16). */
  async sampleVectors(n: number): Promise<Float32Array | undefined> {
    const v = this.#vectors;
    if (v === undefined || v.count === 0) return undefined;
    const take = Math.min(n, v.count);
    return v.gather(BigInt64Array.from({ length: take }, (_, i) => BigInt(Math.floor((i * v.count) / take))));
  }

  /** The search settings of the operating point for `recall` (undefined: none asked, or exact index). */
  pointFor(recall: number | undefined): { nprobe: number; kFactor: number; efSearch?: number } | undefined {
    if (recall === undefined || !/IVF\d/.test(this.manifest.factory)) return undefined;
    const point = pickOperatingPoint(this.manifest.operatingPoints ?? [], recall);
    if (!point) {
      throw new ParamineError(
        'BAD_INPUT',
        `the index has no measured operating points to meet recall ${recall}: run \`paramine tune --index ` +
          `${this.dir}\`, or give nprobe`,
        { field: 'recall' },
      );
    }
    return {
      nprobe: point.nprobe,
      kFactor: point.kFactor,
      ...(point.efSearch === undefined ? {} : { efSearch: point.efSearch }),
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.#shards.map((s) => s.close()), this.#vectors?.close()]);
  }
}

export interface WriteOptions {
  model: ModelRef;
  /** Recorded under `build` in the manifest (factory plan, corpus, timings...). */
  build?: Record<string, unknown>;
  /** Query defaults; default nprobe 32 (clamped to nlist) and kFactor 8 for refine factories, else 1. */
  search?: { nprobe?: number; kFactor?: number; efSearch?: number; refine?: 'vectors' };
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
  if (!options.overwrite && (await pathExists(join(dir, MANIFEST_FILE)))) {
    throw new ParamineError('CONFLICT', `${dir} already holds an index (pass overwrite to replace it)`);
  }
  const files = shards.map((_, i) => shardFileName(i));
  await Promise.all(
    shards.map(async (shard, i) => {
      await replaceFile(join(dir, files[i]!), (tmp) => shard.write(tmp));
    }),
  );
  const written = shards.map((s, i) => ({ file: files[i]!, count: s.ntotal }));
  return writeIndexManifest(dir, { ...info, nlist: shards[0]!.nlist, shards: written }, options);
}

/**
 * The manifest for shard files already in `dir` (the indexer writes shards one at a time to bound its
 * memory, then calls this); written last, so a directory with a manifest is a complete index.
 */
export async function writeIndexManifest(
  dir: string,
  info: {
    factory: string;
    dim: number;
    metric: Metric;
    nlist: number | null;
    shards: ReadonlyArray<{ file: string; count: number }>;
    removed?: number;
  },
  options: WriteOptions,
): Promise<Manifest> {
  if (!options.overwrite && (await pathExists(join(dir, MANIFEST_FILE)))) {
    throw new ParamineError('CONFLICT', `${dir} already holds an index (pass overwrite to replace it)`);
  }
  const ntotal = info.shards.reduce((s, x) => s + x.count, 0) + (info.removed ?? 0);
  if (options.vectors) await checkVectors(dir, options.vectors, ntotal, info.dim);
  const refine = info.factory.includes(',R');
  const s = options.search ?? {};
  if (s.refine === 'vectors' && !options.vectors) {
    throw new ParamineError('BAD_INPUT', "search.refine 'vectors' needs the kept vectors (vectors.f16)", {
      field: 'search.refine',
    });
  }
  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    version: MANIFEST_VERSION,
    dim: info.dim,
    metric: info.metric,
    factory: info.factory,
    model: { id: options.model.id, sha256: options.model.sha256.toLowerCase() },
    ntotal,
    ...(info.removed ? { removed: info.removed } : {}),
    shards: await Promise.all(
      info.shards.map(async (x) => ({
        file: x.file,
        count: x.count,
        ...(await fileDigest(join(dir, x.file))),
      })),
    ),
    search: {
      nprobe: s.nprobe ?? Math.min(info.nlist ?? 1, 32),
      kFactor: s.kFactor ?? (refine || s.refine === 'vectors' ? 8 : 1),
      ...(s.efSearch === undefined ? {} : { efSearch: s.efSearch }),
      ...(s.refine === undefined ? {} : { refine: s.refine }),
    },
    build: options.build ?? {},
    ...(options.vectors
      ? { vectors: { ...options.vectors, ...(await fileDigest(join(dir, options.vectors.file))) } }
      : {}),
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

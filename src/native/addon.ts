/** Loading the FAISS addon, its native shapes, and the mapping of its errors to ParamineError codes. */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { env } from '../env.js';
import { type ErrorCode, ParamineError } from '../errors.js';
import type {
  AnnSearchParams,
  GramRowsView,
  Int8RowsView,
  KernelCheck,
  KmeansOptions,
  Metric,
  SearchResult,
  ThreadCounts,
} from './types.js';

export interface NativeIndex {
  readonly dim: number;
  readonly metric: Metric;
  readonly ntotal: number;
  readonly isTrained: boolean;
  readonly readOnly: boolean;
  readonly closed: boolean;
  readonly factory: string;
  readonly structure: string;
  readonly nlist: number | null;
  readonly coarseDim: number;
  readonly hnswQuantizer: boolean;
  readonly preTransform: boolean;
  readonly removable: boolean;
  train(x: Float32Array): Promise<void>;
  trainInputStages(x: Float32Array): Promise<void>;
  applyPreTransform(x: Float32Array): Promise<Float32Array>;
  setCentroids(c: Float32Array): Promise<void>;
  trainCodes(x: Float32Array): Promise<void>;
  add(x: Float32Array, ids: BigInt64Array): Promise<void>;
  search(x: Float32Array, k: number, options?: AnnSearchParams): Promise<SearchResult>;
  write(path: string): Promise<void>;
  cloneEmpty(): Promise<NativeIndex>;
  merge(other: NativeIndex): Promise<void>;
  removeIds(ids: BigInt64Array): Promise<number>;
  close(): Promise<void>;
}

export interface NativeHalfVectors {
  readonly count: number;
  readonly dim: number;
  rescore(queries: Float32Array, candidates: BigInt64Array, k: number, metric: Metric): Promise<SearchResult>;
  gather(ids: BigInt64Array, out?: Float32Array): Promise<Float32Array>;
  close(): Promise<void>;
}

export interface NativeGramScorer {
  score(i: number, js: Int32Array, out: Float32Array): void;
}

export interface NativeBinding {
  GramScorer: new (
    rows: GramRowsView,
    idf: Float32Array,
    invNorm: Float32Array,
    means?: Int8RowsView,
  ) => NativeGramScorer;
  createIndex(factory: string, dim: number, metric: Metric): NativeIndex;
  kmeans(x: Float32Array, dim: number, k: number, options: KmeansOptions): Promise<Float32Array>;
  openHalfVectors(path: string, dim: number): Promise<NativeHalfVectors>;
  readIndex(path: string, options: { mmap: boolean }): Promise<NativeIndex>;
  setNumThreads(n: number, blas?: number): void;
  getNumThreads(): ThreadCounts;
  mapFile?(path: string, offset?: number, length?: number): ArrayBuffer;
  dropMappedPages?(path: string): number;
  readonly MAX_K: number;
  readonly MAX_BASE_K: number;
  readonly faissVersion: string;
  readonly distanceKernels: string;
  checkDistanceKernels(): KernelCheck;
}

/** Codes the addon sets on its errors (see src/native/errors.h). */
const NATIVE_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'BAD_INPUT',
  'INDEX_NOT_TRAINED',
  'INDEX_CLOSED',
  'INDEX_READ_ONLY',
  'DIM_MISMATCH',
  'FILE_NOT_FOUND',
  'BAD_FILE',
  'CONFLICT',
  'FAISS_ERROR',
  'INTERNAL',
]);

export function toParamineError(e: unknown): ParamineError {
  if (e instanceof ParamineError) return e;
  if (e instanceof Error) {
    const code = (e as Error & { code?: unknown }).code;
    const known = typeof code === 'string' && NATIVE_CODES.has(code) ? (code as ErrorCode) : 'FAISS_ERROR';
    return new ParamineError(known, e.message, { cause: e });
  }
  return new ParamineError('FAISS_ERROR', String(e));
}

export async function wrap<T>(p: () => Promise<T>): Promise<T> {
  try {
    return await p();
  } catch (e) {
    throw toParamineError(e);
  }
}

/** Where the addon is: src/native/build/Release under the package root (same from src/ and dist/). */
export function addonPath(): string {
  const override = env('PARAMINE_FAISS_ADDON');
  if (override) return override;
  return fileURLToPath(new URL('../../src/native/build/Release/paramine_faiss.node', import.meta.url));
}

let binding: NativeBinding | undefined;

export function load(): NativeBinding {
  if (binding) return binding;
  const path = addonPath();
  if (!existsSync(path)) {
    throw new ParamineError('UNAVAILABLE', `FAISS addon not built (${path}); run: npm run build:native`);
  }
  // Idle OpenMP workers sleep instead of spinning (GOMP's default spin burns the cores that the other
  // pool, the event loop and the encoder need). libgomp reads this when the addon loads it.
  process.env.OMP_WAIT_POLICY ??= 'PASSIVE';
  const loaded: unknown = createRequire(import.meta.url)(path);
  if (
    typeof loaded !== 'object' ||
    loaded === null ||
    typeof (loaded as { createIndex?: unknown }).createIndex !== 'function' ||
    typeof (loaded as { readIndex?: unknown }).readIndex !== 'function'
  ) {
    throw new ParamineError('UNAVAILABLE', `${path} is not the paramine FAISS addon`);
  }
  binding = loaded as NativeBinding;
  return binding;
}

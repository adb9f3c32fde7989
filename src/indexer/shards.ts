/**
 * Phase 2 of a build, in resumable steps recorded in the build state:
 *
 *   assemble  spill chunks -> work/vectors.f16 (one file: uniform random reads for the sample)
 *   train     the plan's index on a seeded uniform sample -> work/trained.faiss (src/index/train.ts)
 *   fill      contiguous id ranges into clones of it, one shard file each, `fillJobs` at a time
 *             (src/index/fill.ts); the shard count keeps one shard's working set under shardMemory
 *   finish    vectors.f16 moved into the index (unless --vectors none), the manifest written last
 *
 * Peak memory is the larger of training's (one k-means group, a batch) and fillJobs shards' working
 * sets, whatever the collection's size.
 */
import { existsSync } from 'node:fs';
import { type FileHandle, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { dropStaleTemps, fsyncDir, publishFile, replaceFile } from '../durable.js';
import { ParamineError } from '../errors.js';
import {
  chooseFactory,
  fillShards,
  type IndexPlan,
  type Manifest,
  type ModelRef,
  planForFactory,
  planWithinBudget,
  sampleIds,
  shardFileName,
  splitRange,
  type TrainProgress,
  trainIndex,
  VECTORS_FILE,
  VectorFile,
  writeIndexFile,
  writeIndexManifest,
} from '../index/index.js';
import { readIndex } from '../native/index.js';
import { createProgress } from '../progress.js';
import type { BuildOptions } from './options.js';
import { dropChunks, readChunkHalves } from './spill.js';
import type { BuildState } from './state.js';

export interface ShardsInput {
  out: string;
  workDir: string;
  state: BuildState;
  options: BuildOptions;
  model: ModelRef;
  /** Persists the build state (phase-2 steps done); resolves once durable. */
  saveState: (state: BuildState) => Promise<void>;
  onProgress?: () => void;
  log?: (line: string) => void;
}

export interface ShardsResult {
  factory: string;
  shards: number;
  trainMs: number;
  fillMs: number;
  plan: IndexPlan;
}

export type IndexProgress = NonNullable<BuildState['index']>;

/** The plan for this build: auto's choice, or the given factory's shape. */
export function buildPlan(options: BuildOptions, n: number, dim: number): IndexPlan {
  const common = {
    n: Math.max(n, 1),
    dim,
    metric: options.metric,
    vectorsKept: options.vectors === 'f16',
    trainPointsPerList: options.trainPointsPerList,
    ...(options.trainSample === undefined ? {} : { maxTrainingVectors: options.trainSample }),
    ...(options.refine === 'auto' ? {} : { refine: options.refine }),
  };
  if (options.refine === 'vectors' && options.vectors !== 'f16') {
    throw new ParamineError('BAD_INPUT', '--refine vectors needs the kept vectors (--vectors f16)', {
      field: 'refine',
    });
  }
  return options.factory === 'auto'
    ? chooseFactory({ ...common, ...(options.maxRam === undefined ? {} : { maxRamBytes: options.maxRam }) })
    : planWithinBudget(planForFactory(options.factory, common), options.maxRam);
}

/** Shards: at least the requested count, more when one would exceed shardMemory while filled. */
export function shardCount(plan: IndexPlan, n: number, options: BuildOptions): number {
  // Inverted lists grow by doubling: a shard may hold up to twice its bytes while it is filled.
  const working = 2 * plan.cost.perVector.ram * n;
  const needed = Math.ceil(working / options.shardMemory);
  return Math.max(1, Math.min(Math.max(options.shards, needed), n, 1024));
}

export async function writeShards(input: ShardsInput): Promise<ShardsResult> {
  const { options, workDir, out } = input;
  let state = input.state;
  const n = state.nextId;
  const dim = state.model.dim;
  const log = input.log ?? (() => {});
  const plan = buildPlan(options, n, dim);
  let progress: IndexProgress = state.index ?? { assembled: false, trainMs: 0, done: [], fillMs: 0 };
  const save = async (p: IndexProgress) => {
    progress = p;
    state = { ...state, index: p };
    await input.saveState(state);
  };

  const assembled = join(workDir, VECTORS_FILE);
  // A crash between moving vectors.f16 into the index and writing the manifest: move it back.
  if (progress.assembled && !existsSync(assembled) && existsSync(join(out, VECTORS_FILE))) {
    await publishFile(join(out, VECTORS_FILE), assembled);
  }
  if (!progress.assembled || !existsSync(assembled)) {
    await assemble(workDir, state, dim, options.checkpointEvery, assembled);
    await save({ ...progress, assembled: true });
  }
  if (!options.keepEmbeddings) dropChunks(workDir);
  const source = await VectorFile.openFile(assembled, n, dim);
  try {
    const trainedPath = join(workDir, 'trained.faiss');
    if (progress.trained !== plan.factory || !existsSync(trainedPath)) {
      log(`index: ${plan.reason}`);
      const t0 = Date.now();
      await trainTemplate(plan, options, source, trainedPath, log);
      // A new template invalidates shards filled from an earlier one.
      await save({
        ...progress,
        trained: plan.factory,
        trainMs: Date.now() - t0,
        shards: undefined,
        done: [],
      });
    }
    const template = await readIndex(trainedPath);
    try {
      const shards = progress.shards ?? shardCount(plan, n, options);
      if (progress.shards === undefined) await save({ ...progress, shards });
      const fillMs = await fill(input, template, source, shards, progress, save);
      await finish(input, plan, n, dim, shards, assembled, progress);
      return { factory: plan.factory, shards, trainMs: progress.trainMs, fillMs, plan };
    } finally {
      await template.close();
    }
  } finally {
    await source.close();
  }
}

/**
 * Trains the empty index on a seeded sample of `source` and writes it to `path`: the template every
 * shard or piece is filled from (the one-machine build and the queue's coordinator).
 */
export async function trainTemplate(
  plan: IndexPlan,
  options: BuildOptions,
  source: VectorFile,
  path: string,
  log: (line: string) => void,
): Promise<void> {
  const index = await trainIndex({
    plan,
    dim: source.dim,
    metric: options.metric,
    source,
    sampleIds: sampleIds(source.count, plan.trainSize, options.seed),
    seed: options.seed,
    memoryBytes: options.trainMemory,
    threads: options.threads,
    onProgress: trainingProgress(options, log),
  });
  await writeIndexFile(index, path);
  await index.close();
}

function trainingProgress(options: BuildOptions, log: (line: string) => void): (p: TrainProgress) => void {
  const bar = createProgress({ label: 'training', unit: 'sample points', quiet: options.quiet });
  const names: Record<string, string> = {
    input: 'raw-vector stages (OPQ / refine codes)',
    level1: 'level-1 k-means',
    quantizer: 'coarse quantizer (HNSW graph)',
    codes: 'PQ codebooks',
    faiss: 'FAISS train()',
  };
  return (p) => {
    if (p.stage === 'groups' || p.stage === 'assign') {
      bar.update(p.done, p.total, { stage: p.stage === 'groups' ? 'k-means per group' : 'assigning' });
      if (p.stage === 'groups' && p.done === p.total && p.total > 0) bar.stop();
    } else if (p.done === 0) {
      log(`training: ${names[p.stage] ?? p.stage}`);
    }
  };
}

async function fill(
  input: ShardsInput,
  template: Awaited<ReturnType<typeof readIndex>>,
  source: VectorFile,
  shards: number,
  progress: IndexProgress,
  save: (p: IndexProgress) => Promise<void>,
): Promise<number> {
  const { options, out } = input;
  const n = source.count;
  const ranges = splitRange(n, shards);
  const done = new Set(progress.done);
  const skipped = ranges.filter((_, i) => done.has(i)).reduce((a, r) => a + r.count, 0);
  const bar = createProgress({ label: 'filling', unit: 'vectors', quiet: options.quiet });
  const t0 = Date.now();
  let saving = Promise.resolve();
  await fillShards({
    template,
    source,
    ranges,
    jobs: options.fillJobs,
    skip: done,
    save: async (i, index) => {
      await writeIndexFile(index, join(out, shardFileName(i)));
      done.add(i);
      // Serialized: two shards finishing together must not both write the state from a stale copy.
      saving = saving.then(() => save({ ...progress, done: [...done].sort((a, b) => a - b) }));
      await saving;
    },
    onProgress: (added) => {
      bar.update(skipped + added, n);
      input.onProgress?.();
    },
  });
  bar.stop();
  const fillMs = progress.fillMs + (Date.now() - t0);
  await save({ ...progress, done: [...done].sort((a, b) => a - b), fillMs });
  return fillMs;
}

/** The last step of a build: vectors.f16 moved into the index (or dropped), the manifest written last. */
export async function finish(
  input: ShardsInput,
  plan: IndexPlan,
  n: number,
  dim: number,
  shards: number,
  assembled: string,
  progress: IndexProgress,
): Promise<void> {
  const { options, out, state } = input;
  const ranges = splitRange(n, shards);
  let kept: Manifest['vectors'];
  const target = join(out, VECTORS_FILE);
  if (options.vectors === 'f16') {
    if (existsSync(assembled)) await publishFile(assembled, target);
    kept = { file: VECTORS_FILE, dtype: 'float16', count: n, dim };
  } else {
    await rm(target, { force: true });
  }
  await fsyncDir(out);
  await writeIndexManifest(
    out,
    {
      factory: plan.factory,
      dim,
      metric: options.metric,
      nlist: plan.nlist > 0 ? plan.nlist : null,
      shards: ranges.map((r, i) => ({ file: shardFileName(i), count: r.count })),
    },
    {
      model: input.model,
      ...(kept ? { vectors: kept } : {}),
      search: plan.kind === 'flat' ? {} : { ...plan.search, ...(kept ? {} : { refine: undefined }) },
      build: {
        plan,
        trainSize: plan.trainSize,
        trainMs: progress.trainMs,
        fillMs: progress.fillMs,
        shardRanges: ranges,
        corpus: { inputs: state.inputs, counters: state.counters, options: state.contentOptions },
      },
    },
  );
}

/** Concatenates the spill chunks (half floats; legacy float32 ones converted) into one file, durably. */
async function assemble(workDir: string, state: BuildState, dim: number, perChunk: number, path: string) {
  // A crash mid-assembly left a temporary as large as the result (and builds before durable.ts a .partial).
  await dropStaleTemps(path);
  await rm(`${path}.partial`, { force: true });
  await replaceFile(path, async (tmp) => {
    const fh: FileHandle = await open(tmp, 'w');
    try {
      for (let c = 0; c < state.chunks; c++) {
        const halves = await readChunkHalves(workDir, c, dim);
        const bytes = new Uint8Array(halves.buffer, halves.byteOffset, halves.byteLength);
        let off = 0;
        const at = c * perChunk * dim * 2;
        while (off < bytes.length)
          off += (await fh.write(bytes, off, bytes.length - off, at + off)).bytesWritten;
      }
      await fh.truncate(state.nextId * dim * 2);
    } finally {
      await fh.close();
    }
  });
}

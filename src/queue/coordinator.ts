/**
 * `paramine index --queue URL --work DIR`: the coordinator of a distributed build. It splits the inputs
 * into chunks and runs the phases, each recorded in DIR/build.json so a killed coordinator resumes:
 *
 *   embed     one job a chunk (workers): normalize, filter, in-chunk dedup, embed, spill half floats
 *   dedup     one job a key-hash partition (workers): cross-chunk duplicates, first occurrence kept
 *   assemble  coordinator: store (LMDB) and DIR/vectors.f16 in input order, dense ids
 *   train     coordinator: the plan's index on a seeded sample (as the one-machine build)
 *   fill      one job a piece of a shard (workers): DIR/pieces/*.faiss
 *   merge     coordinator: pieces -> shard files, vectors.f16 moved in, manifest written last
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Queue } from 'bullmq';
import { z } from 'zod';
import { assertReadable, formatOf } from '../corpus/index.js';
import { Encoder } from '../encode/index.js';
import { ParamineError } from '../errors.js';
import { type OperatingPoint, splitRange, VectorFile } from '../index/index.js';
import { contentOptions, tuneBuilt } from '../indexer/build.js';
import { buildGroupTables } from '../indexer/groups.js';
import { type BuildOptions, buildOptionsSchema } from '../indexer/options.js';
import { buildPlan, shardCount, trainTemplate } from '../indexer/shards.js';
import { resolveModelDir } from '../models/resolve.js';
import { createProgress } from '../progress.js';
import { STORE_DIR } from '../store/index.js';
import { parseInput } from '../validate.js';
import { assemble } from './assemble.js';
import { connectionOptions, parseQueueUrl, queueName, STAGES, type Stage } from './connection.js';
import { readDrops } from './dedup.js';
import { runStage, type StageContext, type StageJob } from './dispatch.js';
import { ensureDirs, layout, readMarker } from './layout.js';
import { mergeShards } from './merge.js';
import { QueueMetrics } from './metrics.js';
import { type QueueOptionsInput, queueOptionsSchema } from './options.js';
import { splitInputs } from './split.js';
import { chunkName, type QueueBuild, readBuild, saveBuild } from './state.js';

export interface DistributedSummary {
  vectors: number;
  shards: number;
  factory: string;
  counters: NonNullable<QueueBuild['counters']>;
  chunks: number;
  skipped: number[];
  resumed: boolean;
  wallMs: number;
  /** The operating point tuning made the search defaults (absent: not tuned). */
  tuned?: OperatingPoint;
}

type Log = (line: string) => void;

export async function buildDistributed(
  buildInput: Record<string, unknown>,
  queueInput: QueueOptionsInput,
  log: Log = () => {},
): Promise<DistributedSummary> {
  const started = Date.now();
  const options = parseInput(buildOptionsSchema, buildInput, 'options');
  const q = parseInput(queueOptionsSchema, queueInput, 'options');
  if (options.embeddings) {
    throw new ParamineError(
      'BAD_INPUT',
      '--embeddings builds run on one machine (no --queue): there is nothing to spread',
      {
        field: 'embeddings',
      },
    );
  }
  if (options.documents || options.inputs.some((f) => formatOf(f, options.format) === 'srt')) {
    throw new ParamineError(
      'BAD_INPUT',
      'documents (--documents, .srt) are split into sentences on one machine (no --queue); split them there or give one sentence a line',
      { field: 'documents' },
    );
  }
  const target = parseQueueUrl(q.queue);
  const work = resolve(q.work);
  mkdirSync(work, { recursive: true });
  ensureDirs(work);
  const previous = readBuild(work);
  let b = previous ?? (await newBuild(work, options, q));
  if (previous) checkSame(previous, options, log);
  const queues = new Map<Stage, Queue>(
    STAGES.map((s) => [
      s,
      new Queue(queueName(s), { connection: connectionOptions(target), prefix: target.prefix }),
    ]),
  );
  const metrics = new QueueMetrics(queues);
  if (q.metricsPort !== undefined) log(`metrics on :${await metrics.listen(q.metricsPort)}/metrics`);
  const ctx = (stage: Stage): StageContext => ({
    queue: queues.get(stage) as Queue,
    stage,
    onFailed: stage === 'embed' ? q.onFailedChunk : 'stop',
    quiet: options.quiet,
    metrics,
    log,
    pollMs: q.pollMs,
  });
  const save = (next: QueueBuild) => {
    b = next;
    saveBuild(work, b);
  };
  try {
    b = await runPhases(work, b, options, ctx, save, log);
  } finally {
    await metrics.close();
    for (const queue of queues.values()) await queue.close();
  }
  // As the one-machine build does, so both end with the same search defaults (on the coordinator).
  const tuned = await tuneBuilt(resolve(options.out), b.factory ?? '', options, log);
  return {
    ...(tuned ? { tuned } : {}),
    vectors: b.vectors ?? 0,
    shards: b.shards ?? 0,
    factory: b.factory ?? '',
    counters: b.counters as NonNullable<QueueBuild['counters']>,
    chunks: b.chunks.length,
    skipped: b.skipped,
    resumed: previous !== undefined,
    wallMs: Date.now() - started,
  };
}

async function runPhases(
  work: string,
  start: QueueBuild,
  options: BuildOptions,
  ctx: (stage: Stage) => StageContext,
  save: (b: QueueBuild) => void,
  log: Log,
): Promise<QueueBuild> {
  let b = start;
  const set = (patch: Partial<QueueBuild>) => {
    b = { ...b, ...patch };
    save(b);
  };
  if (b.phase === 'embed') {
    const jobs = b.chunks.map((_, c) => ({
      id: `${b.id}-embed-${c}`,
      name: chunkName(b, c),
      data: { work, build: b.id, chunk: c },
      done: () => readMarker(layout.chunk(work, c)) !== undefined,
    }));
    const given = await runStage(ctx('embed'), jobs);
    set({ phase: 'dedup', skipped: [...b.skipped, ...given].sort((x, y) => x - y) });
  }
  if (b.phase === 'dedup') {
    await runStage(ctx('dedup'), partitionJobs(work, b));
    set({ phase: 'assemble' });
  }
  if (b.phase === 'assemble') {
    const markers = Array.from({ length: b.partitions }, (_, p) =>
      readMarker(layout.partition(work, p), true),
    );
    const drops = readDrops(
      work,
      b,
      markers.filter((m) => m !== undefined),
    );
    const bar = createProgress({ label: 'assemble', unit: 'chunks', quiet: options.quiet });
    const t0 = Date.now();
    const done = await assemble(work, b.out, b, drops, (d, t) => bar.update(d, t));
    bar.stop();
    log(`assemble: ${done.vectors} vectors in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    set({ phase: 'train', vectors: done.vectors, counters: done.counters });
  }
  if (b.phase === 'train') {
    const trained = await train(work, b, options, log);
    log(`train: ${trained.factory} in ${(trained.trainMs / 1000).toFixed(1)} s`);
    set({ phase: 'fill', ...trained });
  }
  if (b.phase === 'fill') {
    const t0 = Date.now();
    await runStage(ctx('fill'), fillJobs(work, b));
    set({ phase: 'merge', fillMs: b.fillMs + (Date.now() - t0) });
  }
  if (b.phase === 'merge') {
    const t0 = Date.now();
    await mergeShards(work, b, options);
    log(`merge: ${b.shards ?? 0} shard(s) and manifest in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await buildGroupTables(b.out, options.groupKeys, { quiet: options.quiet });
    set({ phase: 'done' });
  }
  return b;
}

function partitionJobs(work: string, b: QueueBuild): StageJob[] {
  return Array.from({ length: b.partitions }, (_, p) => ({
    id: `${b.id}-dedup-${p}`,
    name: `dedup partition ${p}`,
    data: { work, build: b.id, partition: p },
    done: () => readMarker(layout.partition(work, p)) !== undefined,
  }));
}

function fillJobs(work: string, b: QueueBuild): StageJob[] {
  return (b.pieces ?? []).map((p) => ({
    id: `${b.id}-fill-${p.shard}-${p.piece}`,
    name: `shard ${p.shard} piece ${p.piece} (ids ${p.first}..${p.first + p.count - 1})`,
    data: { work, build: b.id, ...p },
    done: () => readMarker(layout.piece(work, p.shard, p.piece)) !== undefined,
  }));
}

/** Trains on a seeded sample of the assembled vectors; plans the shards and their pieces. */
async function train(work: string, b: QueueBuild, options: BuildOptions, log: Log) {
  const n = b.vectors ?? 0;
  const dim = b.model.dim;
  const plan = buildPlan(options, n, dim);
  log(`index: ${plan.reason}`);
  const t0 = Date.now();
  const source = await VectorFile.openFile(layout.vectors(work), n, dim);
  try {
    await trainTemplate(plan, options, source, layout.trained(work), log);
  } finally {
    await source.close();
  }
  const shards = shardCount(plan, n, options);
  const pieceSize = z
    .number()
    .int()
    .parse((b.options as { pieceSize?: number }).pieceSize ?? 1_000_000);
  const pieces = splitRange(n, shards).flatMap((r, shard) =>
    splitRange(r.count, Math.ceil(r.count / pieceSize)).map((p, piece) => ({
      shard,
      piece,
      first: r.first + p.first,
      count: p.count,
    })),
  );
  return { factory: plan.factory, trainMs: Date.now() - t0, shards, pieces };
}

async function newBuild(
  work: string,
  options: BuildOptions,
  q: z.output<typeof queueOptionsSchema>,
): Promise<QueueBuild> {
  for (const [i, f] of options.inputs.entries()) await assertReadable(f, `inputs[${i}]`);
  const out = resolve(options.out);
  if (existsSync(join(out, 'manifest.json')) || existsSync(join(out, STORE_DIR))) {
    throw new ParamineError(
      'CONFLICT',
      `${out} already holds an index or a build; choose another --out or remove it`,
      {
        field: 'out',
      },
    );
  }
  const inputs = options.inputs.map((p) => ({ path: resolve(p), size: statSync(p).size }));
  const encoder = await Encoder.open(resolveModelDir(options.model), { worker: false, threads: 1 });
  const model = { id: encoder.modelId, sha256: encoder.onnxSha256, dim: encoder.dim };
  await encoder.close();
  const b: QueueBuild = {
    formatVersion: 1,
    id: randomBytes(6).toString('hex'),
    out,
    inputs,
    options: { ...options, inputs: inputs.map((f) => f.path), out, pieceSize: q.pieceSize },
    model,
    chunks: splitInputs(
      inputs.map((f) => f.path),
      q.chunkLines,
      options.format,
    ),
    partitions: q.partitions,
    phase: 'embed',
    skipped: [],
    trainMs: 0,
    fillMs: 0,
    elapsedMs: 0,
  };
  saveBuild(work, b);
  return b;
}

/** A resumed build must be given the same inputs and content options. */
function checkSame(b: QueueBuild, options: BuildOptions, log: Log): void {
  const paths = options.inputs.map((p) => resolve(p));
  const same =
    paths.length === b.inputs.length &&
    paths.every((p, i) => p === b.inputs[i]?.path && statSync(p).size === b.inputs[i]?.size);
  if (!same) {
    throw new ParamineError(
      'CONFLICT',
      `the inputs differ from the build in progress in ${b.id} (names, order or sizes)`,
      {
        field: 'inputs',
      },
    );
  }
  const was = contentOptions(buildOptionsSchema.parse(b.options));
  const now = contentOptions(options);
  for (const k of new Set([...Object.keys(was), ...Object.keys(now)])) {
    if (was[k] !== now[k]) {
      throw new ParamineError('CONFLICT', `--${k} differs from the build in progress (${String(was[k])})`, {
        field: k,
      });
    }
  }
  log(`resuming distributed build ${b.id} at phase ${b.phase}`);
}

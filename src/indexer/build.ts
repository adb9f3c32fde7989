/**
 * `paramine index`: the offline build. Phase 1 (ingest.ts) embeds and stores every kept sentence,
 * checkpointed; phase 2 (shards.ts) trains the index on a sample of the spilled vectors, fills the
 * shards and writes the manifest last, so an index directory with a manifest is always complete.
 */
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { assertReadable, formatOf } from '../corpus/index.js';
import { Encoder } from '../encode/index.js';
import { diskFullOr, ParamineError } from '../errors.js';
import { type OperatingPoint, readManifest } from '../index/index.js';
import { resolveModelDir } from '../models/resolve.js';
import { createProgress } from '../progress.js';
import { type GroupKeySpec, SentenceStore, STORE_DIR, USER_ID_KEY } from '../store/index.js';
import { parseInput } from '../validate.js';
import { checkBudget } from './budget.js';
import { ProvidedEmbeddings } from './embeddings.js';
import { buildGroupTables } from './groups.js';
import { ingest } from './ingest.js';
import { type BuildOptions, type BuildOptionsInput, buildOptionsSchema } from './options.js';
import { writeShards } from './shards.js';
import { type BuildState, buildStateSchema, type Counters, emptyCounters, STATE_KEY } from './state.js';
import { runTune } from './tune.js';

export interface BuildSummary {
  counters: Counters;
  vectors: number;
  shards: number;
  factory: string;
  /** Why this index (auto's reasons, cost). */
  reason: string;
  /** Embedding the sentences, summed over every run of this build (a resumed build's included). */
  embedMs: number;
  trainMs: number;
  fillMs: number;
  /** This run only. */
  wallMs: number;
  /** The process's peak resident set (getrusage maxrss). */
  peakRssBytes: number;
  resumed: boolean;
  /** The operating point the tuning made the search defaults (absent: not tuned). */
  tuned?: OperatingPoint;
}

/** Options whose change alters the content: a resume must use the same ones. */
export function contentOptions(o: BuildOptions): BuildState['contentOptions'] {
  return {
    minTokens: o.minTokens,
    maxTokens: o.maxTokens,
    maxChars: o.maxChars,
    checkpointEvery: o.checkpointEvery,
    onBadRecord: o.onBadRecord,
    // Only when given, so builds started before --embeddings existed still resume.
    ...(o.embeddings ? { embeddings: o.embeddings.map((p) => resolve(p)).join('\n') } : {}),
  };
}

export async function buildIndex(
  input: BuildOptionsInput,
  log: (line: string) => void = () => {},
): Promise<BuildSummary> {
  const options = parseInput(buildOptionsSchema, input, 'options');
  const started = Date.now();
  let peakRss = process.memoryUsage().rss;
  const sampleRss = () => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  };
  for (const [i, f] of options.inputs.entries()) await assertReadable(f, `inputs[${i}]`);
  // Before any work: a collection whose index cannot fit --max-ram is refused here.
  if (!options.resume || !existsSync(join(resolve(options.out), STORE_DIR))) await checkBudget(options);
  const { out, storeDir, workDir, finished } = await prepareOut(options);
  const encoder = await Encoder.open(resolveModelDir(options.model));
  const store = SentenceStore.open(storeDir);
  let provided: ProvidedEmbeddings | undefined;
  try {
    const inputs = options.inputs.map((p) => ({ path: resolve(p), size: statSync(p).size }));
    const model = { id: encoder.modelId, sha256: encoder.onnxSha256, dim: encoder.dim };
    const previous = store.getState<unknown>(STATE_KEY);
    let state = startState(previous, inputs, model, options, log);
    // --resume on a complete index (same inputs, model and options, checked above): nothing left but tuning.
    if (finished) return await finishedBuild(out, { state, store, options, started }, log);
    if (state.phase === 'ingest') {
      if (options.embeddings) {
        provided = await ProvidedEmbeddings.open(options.embeddings, options.inputs, model);
      }
      state = await runIngest(state, { store, encoder, workDir, options, provided, sampleRss, log });
    }
    const built = await writeShards({
      out,
      workDir,
      state,
      options,
      model: { id: model.id, sha256: model.sha256 },
      saveState: async (s) => {
        state = s;
        await store.commit([], { [STATE_KEY]: s });
      },
      onProgress: sampleRss,
      log,
    });
    state = { ...state, phase: 'done' };
    await store.commit([], { [STATE_KEY]: state });
    if (!options.keepEmbeddings) rmSync(workDir, { recursive: true, force: true });
    const tuned = await tuneBuilt(out, built.factory, options, log);
    await buildGroupTables(out, groupKeysOf(options, store), { quiet: options.quiet, store });
    sampleRss();
    return {
      counters: state.counters,
      vectors: state.nextId,
      shards: built.shards,
      factory: built.factory,
      reason: built.plan.reason,
      embedMs: state.elapsedMs,
      trainMs: built.trainMs,
      fillMs: built.fillMs,
      wallMs: Date.now() - started,
      peakRssBytes: Math.max(peakRss, process.resourceUsage().maxRSS * 1024),
      resumed: previous !== undefined,
      ...(tuned ? { tuned } : {}),
    };
  } catch (e) {
    // A full disk: what was committed stays, and `--resume` continues once there is room.
    throw diskFullOr(e, `building ${out} (rerun with --resume once there is space)`);
  } finally {
    await store.close();
    await provided?.close();
    await encoder.close();
  }
}

/**
 * The last step (one machine and distributed): operating points and tuned search defaults, for IVF
 * indexes that keep their vectors.
 */
export async function tuneBuilt(
  out: string,
  factory: string,
  options: BuildOptions,
  log: (line: string) => void,
): Promise<OperatingPoint | undefined> {
  if (!options.tune || !/IVF\d/.test(factory) || options.vectors !== 'f16') return undefined;
  try {
    const result = await runTune(
      { index: out, queries: options.tuneQueries, targetRecall: options.targetRecall, quiet: options.quiet },
      options.quiet ? () => {} : log,
    );
    return result.chosen;
  } catch (e) {
    // The index is complete without it: say so, and how to tune it later.
    log(`tuning failed (${(e as Error).message}); the index is usable: run paramine tune --index ${out}`);
    return undefined;
  }
}

/**
 * Checks the inputs and the output directory before any work: a finished index is never overwritten
 * (with --resume it is `finished`: the build has nothing left to do).
 */
async function prepareOut(options: BuildOptions) {
  const out = resolve(options.out);
  const storeDir = join(out, STORE_DIR);
  const workDir = join(out, 'work');
  if (existsSync(join(out, 'manifest.json'))) {
    if (options.resume && existsSync(storeDir)) return { out, storeDir, workDir, finished: true };
    throw new ParamineError(
      'CONFLICT',
      `${out} already holds a finished index; choose another --out or remove it`,
      { field: 'out' },
    );
  }
  if (existsSync(storeDir) && !options.resume) {
    throw new ParamineError(
      'CONFLICT',
      `${out} holds an unfinished build; add --resume to continue it, or remove it`,
      { field: 'out' },
    );
  }
  mkdirSync(workDir, { recursive: true });
  return { out, storeDir, workDir, finished: false };
}

/**
 * The summary of a build that had already finished. The steps after the manifest are redone where a kill
 * may have cut them: tuning when it left no operating points, group tables (rewritten whole) always.
 */
async function finishedBuild(
  out: string,
  ctx: { state: BuildState; store: SentenceStore; options: BuildOptions; started: number },
  log: (line: string) => void,
): Promise<BuildSummary> {
  const { state, options } = ctx;
  const manifest = await readManifest(out);
  log(
    `${out} already holds the finished index of these inputs (${manifest.ntotal} vectors): nothing to redo`,
  );
  const tuned = manifest.operatingPoints ? undefined : await tuneBuilt(out, manifest.factory, options, log);
  await buildGroupTables(out, groupKeysOf(options, ctx.store), { quiet: options.quiet, store: ctx.store });
  const build = manifest.build as { plan?: { reason?: string }; trainMs?: number; fillMs?: number };
  return {
    counters: state.counters,
    vectors: manifest.ntotal,
    shards: manifest.shards.length,
    factory: manifest.factory,
    reason: build.plan?.reason ?? '',
    embedMs: state.elapsedMs,
    trainMs: build.trainMs ?? 0,
    fillMs: build.fillMs ?? 0,
    wallMs: Date.now() - ctx.started,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    resumed: true,
    ...(tuned ? { tuned } : {}),
  };
}

/** A fresh build's state, or the saved one when it may be resumed with these inputs and model. */
function startState(
  previous: unknown,
  inputs: BuildState['inputs'],
  model: BuildState['model'],
  options: BuildOptions,
  log: (line: string) => void,
): BuildState {
  if (previous === undefined) {
    return {
      formatVersion: 1,
      phase: 'ingest',
      inputs,
      model,
      contentOptions: contentOptions(options),
      cursor: { fileIndex: 0, record: 0 },
      nextId: 0,
      chunks: 0,
      counters: emptyCounters(),
      elapsedMs: 0,
    };
  }
  const state = checkResumable(buildStateSchema.parse(previous), inputs, model, contentOptions(options));
  log(`resuming at ${state.nextId} sentences (${state.counters.read} records read, phase ${state.phase})`);
  return state;
}

/** Phase 1 with its progress bar; the state moves to phase 'index' once every input is embedded. */
async function runIngest(
  state: BuildState,
  ctx: {
    store: SentenceStore;
    encoder: Encoder;
    workDir: string;
    options: BuildOptions;
    provided: ProvidedEmbeddings | undefined;
    sampleRss: () => void;
    log: (line: string) => void;
  },
): Promise<BuildState> {
  const totalBytes = state.inputs.reduce((n, f) => n + f.size, 0);
  const bar = createProgress({ label: 'embedding', unit: 'sentences', quiet: ctx.options.quiet });
  const ingested = await ingest(state, ctx.store, ctx.encoder, ctx.workDir, ctx.options, {
    ...(ctx.provided ? { provided: ctx.provided } : {}),
    onCheckpoint: (s, bytes) => {
      ctx.sampleRss();
      // The total is extrapolated from the share of input bytes read so far.
      const estimate = bytes > 0 ? Math.round((s.counters.kept * totalBytes) / bytes) : 0;
      bar.update(s.counters.kept, Math.max(estimate, s.counters.kept), {
        read: s.counters.read,
        dups: s.counters.duplicates,
      });
    },
    onBadRecord: (where, message) => ctx.log(`skipped ${where}: ${message}`),
  });
  bar.stop();
  const next: BuildState = { ...ingested, phase: 'index' };
  await ctx.store.commit([], { [STATE_KEY]: next });
  return next;
}

function checkResumable(
  s: BuildState,
  inputs: BuildState['inputs'],
  model: BuildState['model'],
  content: BuildState['contentOptions'],
): BuildState {
  if (s.model.dim !== model.dim) {
    throw new ParamineError(
      'DIM_MISMATCH',
      `the build being resumed embeds ${s.model.dim}-d vectors with ${s.model.id}, but --model gives ${model.dim}-d vectors`,
      { field: 'model' },
    );
  }
  if (s.model.sha256 !== model.sha256) {
    throw new ParamineError(
      'MODEL_MISMATCH',
      `the build being resumed used model ${s.model.id} (sha256 ${s.model.sha256.slice(0, 12)}…); resume it with the same --model`,
      { field: 'model' },
    );
  }
  const same =
    s.inputs.length === inputs.length &&
    s.inputs.every((f, i) => f.path === inputs[i]?.path && f.size === inputs[i]?.size);
  if (!same) {
    throw new ParamineError(
      'CONFLICT',
      'the inputs differ from the build being resumed (names, order or sizes changed)',
      {
        field: 'inputs',
      },
    );
  }
  const keys = new Set([...Object.keys(content), ...Object.keys(s.contentOptions)]);
  for (const k of keys) {
    const v = content[k];
    if (s.contentOptions[k] !== v) {
      throw new ParamineError(
        'CONFLICT',
        `--${k} differs from the build being resumed (${String(s.contentOptions[k])})`,
        {
          field: k,
        },
      );
    }
  }
  return s;
}

/**
 * The group tables to write: those asked for, `doc` for documents (a sentence's context is its doc's), and
 * `id` when the records carry their own ids (found by them through the API).
 */
function groupKeysOf(options: BuildOptions, store: SentenceStore): GroupKeySpec[] {
  const keys = [...options.groupKeys];
  const docs = options.documents || options.inputs.some((f) => formatOf(f, options.format) === 'srt');
  if (docs && !keys.some((g) => g.key === 'doc')) keys.push({ key: 'doc', order: 'none' });
  if (!keys.some((g) => g.key === USER_ID_KEY) && carriesIds(store))
    keys.push({ key: USER_ID_KEY, order: 'none' });
  return keys;
}

/** Whether the first records carry a user id (a corpus gives every record one, or none). */
function carriesIds(store: SentenceStore): boolean {
  for (const { record } of store.range(0, Math.min(store.count, 1000))) {
    if (record.meta?.[USER_ID_KEY] !== undefined) return true;
  }
  return false;
}

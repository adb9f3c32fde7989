/**
 * An index's structural generations, owned here (issue #51): `index --rebuild` and `index --compact` are
 * writers of a new generation (rebuild.ts says what each writes into WORK); this module runs every step
 * around them, in one place and one order:
 *
 *   1. the structure lock (one structural writer; store/index-lock.ts);
 *   2. a run a crash cut short finished first, instead of starting another;
 *   3. every vector gathered into WORK/vectors.f16;
 *   4. the writer's shards, then its manifest, into WORK (a whole manifest there: a generation ready);
 *   5. published: the files moved in, the manifest last (one rename switches the generation);
 *   6. the store, the updates, the group tables and the later stages brought up to it (idempotent);
 *   7. what the writer does once the new generation is the index's (tuning).
 *
 * Readers follow: a serving process takes a published generation up once `settling` is false
 * (service/generation.ts), and one that opens an index a crash left mid-run finishes it first
 * (`finishCutShort`, service/cut-short.ts). The steps themselves are in generation-steps.ts.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MANIFEST_FILE, type Manifest, type OperatingPoint, readManifest } from '../index/index.js';
import { rewriteLock, rewriting } from '../store/index.js';
import {
  commandOf,
  cutShortRun,
  finishCutShortRun,
  finishSteps,
  gatherVectors,
  moveIn,
  NO_FOLLOWERS,
  type RebuildFollowers,
  type RebuildSummary,
  WORK,
} from './generation-steps.js';

export type { RebuildFollowers, RebuildSummary } from './generation-steps.js';

export type GenerationCommand = 'index --rebuild' | 'index --compact';

/** What a writer is given: the index, its WORK folder, the manifest now, and every vector gathered there. */
export interface GenerationInput {
  dir: string;
  work: string;
  old: Manifest;
  /** The new id space (built and added sentences, deleted ones included). */
  ntotal: number;
  deleted: ReadonlySet<number>;
  log: (line: string) => void;
}

export interface GenerationWriter {
  command: GenerationCommand;
  /** Refuses an index this writer cannot take, before anything is written. */
  check?(old: Manifest, dir: string): Promise<void>;
  /** Writes the new shards, then the manifest last, into `input.work`. */
  write(input: GenerationInput): Promise<{ factory: string; trainMs: number; fillMs: number }>;
  /** Runs once the new generation (of `factory`) is the index's: the operating points of a retrained index. */
  after?(dir: string, factory: string, log: (line: string) => void): Promise<OperatingPoint | undefined>;
}

/** A new generation of `dir` by `writer`, or the one a crash cut short finished instead. */
export async function writeGeneration(
  dir: string,
  writer: GenerationWriter,
  log: (line: string) => void = () => {},
  followers: RebuildFollowers = NO_FOLLOWERS,
): Promise<RebuildSummary> {
  const lock = rewriteLock(dir, writer.command);
  try {
    const resumed = await finishCutShortRun(dir, log, followers);
    if (resumed !== undefined) return resumed;
    const old = await readManifest(dir);
    await writer.check?.(old, dir);
    const work = join(dir, WORK);
    const { ntotal, deleted } = await gatherVectors(dir, work, old, log);
    const written = await writer.write({ dir, work, old, ntotal, deleted, log });
    log('moving the new files in (the manifest last), then folding the store and the updates');
    await moveIn(dir, work);
    const steps = await finishSteps(dir, await readManifest(dir), followers);
    const tuned = await writer.after?.(dir, written.factory, log);
    return {
      ...steps,
      ...written,
      ntotal,
      retrained: writer.command === 'index --rebuild',
      resumed: false,
      tuned,
    };
  } finally {
    lock.release();
  }
}

/** Finishes a generation a crash cut short, under the structure lock (nothing to do: no lock taken). */
export async function finishCutShort(
  dir: string,
  log: (line: string) => void,
  followers: RebuildFollowers,
): Promise<void> {
  const run = await cutShortRun(dir, followers);
  if (run === undefined) return;
  const lock = rewriteLock(dir, commandOf(run.manifest));
  try {
    await finishCutShortRun(dir, log, followers);
  } finally {
    lock.release();
  }
}

/** Whether a new generation is still being written or moved in: a reader waits before taking it up. */
export function settling(dir: string): boolean {
  return rewriting(dir) || existsSync(join(dir, WORK, MANIFEST_FILE));
}

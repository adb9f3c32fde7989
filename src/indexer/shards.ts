/**
 * Phase 2 of a build: train on a seeded sample of the spilled vectors, add every chunk to its shard
 * (contiguous id ranges), write the shards and the manifest. It starts over after a crash: it is cheap
 * next to embedding (FAISS adds tens of thousands of vectors a second), and the manifest, written last,
 * marks the index complete.
 *
 * Unless --vectors none, the same pass keeps every embedding as vectors.f16 (half floats, row i = id i)
 * for mining jobs: written under a .tmp name, synced and renamed before the manifest is written.
 */

import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Manifest, ModelRef } from '../index/index.js';
import { chooseFactory, IndexBuilder, toHalf, VECTORS_FILE } from '../index/index.js';
import type { BuildOptions } from './options.js';
import { readSample, sampleIds } from './sample.js';
import { readChunk } from './spill.js';
import type { BuildState } from './state.js';

export interface ShardsInput {
  out: string;
  workDir: string;
  state: BuildState;
  options: BuildOptions;
  model: ModelRef;
  onProgress?: () => void;
  log?: (line: string) => void;
}

const MAX_TRAIN = 262_144;

/** Training vectors for a user-given factory: ~64 per IVF list (at least 10k for PQ codebooks). */
function trainSizeFor(factory: string, n: number): number {
  const ivf = /IVF(\d+)/.exec(factory);
  if (ivf) return Math.min(n, MAX_TRAIN, Math.max(64 * Number(ivf[1]), 10_000));
  return /^Flat$|^IDMap,Flat$/.test(factory) ? 0 : Math.min(n, 65_536);
}

export async function writeShards(input: ShardsInput): Promise<{ factory: string; shards: number }> {
  const { state, options, workDir } = input;
  const n = state.nextId;
  const dim = state.model.dim;
  const perChunk = options.checkpointEvery;
  const plan = options.factory === 'auto' ? chooseFactory({ n: Math.max(n, 1), dim }) : undefined;
  const factory = plan?.factory ?? options.factory;
  const trainSize = plan?.trainSize ?? trainSizeFor(factory, n);
  const shards = Math.max(1, Math.min(options.shards, n));
  const log = input.log ?? (() => {});

  const t0 = Date.now();
  const sample = await readSample(workDir, sampleIds(n, trainSize, options.seed), perChunk, dim);
  log(`training ${factory} on ${trainSize} of ${n} vectors`);
  const builder = await IndexBuilder.train({ dim, metric: options.metric, factory, shards, sample });
  const trainMs = Date.now() - t0;
  const vectorsPath = join(input.out, VECTORS_FILE);
  let half: FileHandle | undefined;
  try {
    // A crash in an earlier phase 2 may have left either name behind: both are rewritten, or dropped.
    if (options.vectors === 'f16') half = await open(`${vectorsPath}.tmp`, 'w');
    else await Promise.all([vectorsPath, `${vectorsPath}.tmp`].map((p) => rm(p, { force: true })));
    const t1 = Date.now();
    for (let c = 0; c < state.chunks; c++) {
      const vectors = await readChunk(workDir, c, dim);
      const count = vectors.length / dim;
      const ids = new BigInt64Array(count);
      for (let i = 0; i < count; i++) ids[i] = BigInt(c * perChunk + i);
      // Contiguous id ranges per shard: shard s holds chunks [s*C/S, (s+1)*C/S).
      await Promise.all([
        builder.add(vectors, ids, { shard: Math.floor((c * shards) / state.chunks) }),
        half && writeAll(half, toHalf(vectors), c * perChunk * dim * 2),
      ]);
      input.onProgress?.();
    }
    let kept: Manifest['vectors'];
    if (half) {
      await half.sync();
      await half.close();
      await rename(`${vectorsPath}.tmp`, vectorsPath);
      await syncDir(input.out);
      kept = { file: VECTORS_FILE, dtype: 'float16', count: n, dim };
    }
    const addMs = Date.now() - t1;
    await builder.write(input.out, {
      model: input.model,
      ...(kept ? { vectors: kept } : {}),
      build: {
        plan: plan ?? { factory, trainSize },
        trainSize,
        trainMs,
        addMs,
        corpus: {
          inputs: state.inputs,
          counters: state.counters,
          options: state.contentOptions,
        },
      },
    });
    return { factory, shards };
  } finally {
    await half?.close().catch(() => {}); // already closed on success
    await builder.close();
  }
}

/** Writes all of `halves` at byte `position` (little-endian, as every supported platform is). */
async function writeAll(fh: FileHandle, halves: Uint16Array, position: number): Promise<void> {
  const bytes = new Uint8Array(halves.buffer, halves.byteOffset, halves.byteLength);
  let off = 0;
  while (off < bytes.length) {
    const { bytesWritten } = await fh.write(bytes, off, bytes.length - off, position + off);
    off += bytesWritten;
  }
}

/** Makes a rename in `dir` durable (best effort: some platforms cannot open a directory). */
async function syncDir(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch {
    // The rename itself happened; only its durability across a power cut is not guaranteed.
  } finally {
    await fh?.close().catch(() => {});
  }
}

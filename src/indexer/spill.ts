/**
 * Embedding spill files: the indexer writes each checkpoint's vectors to work/emb-NNNNNNNN.f16 (raw
 * little-endian IEEE half floats, row-major: 768 bytes a 384-d vector, half of float32) before committing
 * the matching sentences to LMDB. A crash between the two leaves an orphan file that resume deletes; a
 * crash inside the write leaves only a .tmp file. Encoding is the expensive step (days at scale), so it is
 * never redone; phase 2 assembles the chunks into one vectors.f16 and builds from it.
 *
 * Builds started before spills were half floats left emb-NNNNNNNN.f32 files: they are read (and
 * converted) on resume the same way.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../durable.js';
import { ParamineError } from '../errors.js';
import { fromHalf, toHalf } from '../index/index.js';

export function chunkPath(workDir: string, n: number, ext: 'f16' | 'f32' = 'f16'): string {
  return join(workDir, `emb-${String(n).padStart(8, '0')}.${ext}`);
}

/** Writes durably: data reaches the disk under a temporary name, then the rename publishes it. */
export function writeChunk(workDir: string, n: number, vectors: Float32Array): void {
  const halves = toHalf(vectors);
  writeFileAtomicSync(
    chunkPath(workDir, n),
    new Uint8Array(halves.buffer, halves.byteOffset, halves.byteLength),
  );
}

/** Chunk n as half-float bits (a legacy float32 chunk is converted). */
export async function readChunkHalves(workDir: string, n: number, dim: number): Promise<Uint16Array> {
  const half = chunkPath(workDir, n);
  const legacy = chunkPath(workDir, n, 'f32');
  const path = existsSync(half) || !existsSync(legacy) ? half : legacy;
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch (e) {
    throw new ParamineError(
      'BAD_FILE',
      `${path}: ${(e as Error).message} (spill file of an unfinished build)`,
      {
        cause: e,
      },
    );
  }
  const width = path === half ? 2 : 4;
  if (buf.byteLength % (width * dim) !== 0) {
    throw new ParamineError(
      'BAD_FILE',
      `${path}: size ${buf.byteLength} is not a multiple of ${width * dim}`,
    );
  }
  if (width === 4) {
    // Copy into an aligned buffer: Buffer pools may hand out offsets that are not multiples of 4.
    const floats = new Float32Array(buf.byteLength / 4);
    new Uint8Array(floats.buffer).set(buf);
    return toHalf(floats);
  }
  const out = new Uint16Array(buf.byteLength / 2);
  new Uint8Array(out.buffer).set(buf);
  return out;
}

/** Chunk n as float32 rows. */
export async function readChunk(workDir: string, n: number, dim: number): Promise<Float32Array> {
  return fromHalf(await readChunkHalves(workDir, n, dim));
}

/** Removes chunk files numbered >= keep (written but never committed) and stray temporaries. */
export function dropUncommitted(workDir: string, keep: number): number {
  let dropped = 0;
  for (const name of readdirSync(workDir)) {
    const m = /^emb-(\d{8})\.f(?:16|32)(\.tmp(?:-\d+)?)?$/.exec(name);
    if (m && (m[2] !== undefined || Number(m[1]) >= keep)) {
      rmSync(join(workDir, name), { force: true });
      dropped++;
    }
  }
  return dropped;
}

/** Removes every chunk file (after assembly, unless the user keeps them). */
export function dropChunks(workDir: string): void {
  for (const name of readdirSync(workDir)) {
    if (/^emb-\d{8}\.f(?:16|32)(\.tmp(?:-\d+)?)?$/.test(name)) rmSync(join(workDir, name), { force: true });
  }
}

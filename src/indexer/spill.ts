/**
 * Embedding spill files: the indexer writes each checkpoint's vectors to work/emb-NNNNNNNN.f32 (raw
 * little-endian float32, row-major) before committing the matching sentences to LMDB. A crash between
 * the two leaves an orphan file that resume deletes; a crash inside the write leaves only a .tmp file.
 * Encoding is the expensive step (days at scale), so it is never redone; training and adding re-read
 * these files, which is cheap.
 */
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface SpillChunk {
  /** Chunk number, dense from 0. */
  n: number;
  /** Id of its first vector; vectors are consecutive ids. */
  firstId: number;
  count: number;
}

export function chunkPath(workDir: string, n: number): string {
  return join(workDir, `emb-${String(n).padStart(8, '0')}.f32`);
}

/** Writes durably: data reaches the disk under a temporary name, then the rename publishes it. */
export function writeChunk(workDir: string, n: number, vectors: Float32Array): void {
  const path = chunkPath(workDir, n);
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    const bytes = new Uint8Array(vectors.buffer, vectors.byteOffset, vectors.byteLength);
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

export async function readChunk(workDir: string, n: number, dim: number): Promise<Float32Array> {
  const buf = await readFile(chunkPath(workDir, n));
  if (buf.byteLength % (4 * dim) !== 0) {
    throw new Error(`${chunkPath(workDir, n)}: size ${buf.byteLength} is not a multiple of ${4 * dim}`);
  }
  // Copy into an aligned buffer: Buffer pools may hand out offsets that are not multiples of 4.
  const out = new Float32Array(buf.byteLength / 4);
  new Uint8Array(out.buffer).set(buf);
  return out;
}

/** Removes chunk files numbered >= keep (written but never committed) and stray temporaries. */
export function dropUncommitted(workDir: string, keep: number): number {
  let dropped = 0;
  for (const name of readdirSync(workDir)) {
    const m = /^emb-(\d{8})\.f32(\.tmp)?$/.exec(name);
    if (m && (m[2] !== undefined || Number(m[1]) >= keep)) {
      rmSync(join(workDir, name), { force: true });
      dropped++;
    }
  }
  return dropped;
}

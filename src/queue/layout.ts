/**
 * The shared work directory of a distributed build (an NFS-style path every worker mounts at the same
 * place) and its idempotent outputs. Each job's outputs are written under temporary names, made durable,
 * renamed, and then described by a marker (`NAME.done.json`: byte counts and SHA-256 of every file, plus
 * the job's own counts) renamed into place last. A job that finds a valid marker does nothing; a job run
 * twice writes the same bytes under the same names. The coordinator validates markers before moving on.
 *
 *   DIR/build.json                        the coordinator's state (inputs, chunks, phase)
 *   DIR/chunks/c-000042.{rows,f16,keys}   an embed job's kept rows, their vectors, their sorted key hashes
 *   DIR/dedup/p-007.drops                 a dedup job's rows to drop, (chunk, row) sorted
 *   DIR/vectors.f16, DIR/trained.faiss    assembled vectors, the trained empty index
 *   DIR/pieces/s-000-p-0003.faiss         a fill job's piece of shard 0
 *   DIR/mine/JOB/r-000003.pairs           a mining range job's pairs
 */
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { sha256, writeFileAtomicSync } from '../durable.js';
import { ParamineError } from '../errors.js';

const pad = (n: number, width: number) => String(n).padStart(width, '0');

export const layout = {
  state: (dir: string) => join(dir, 'build.json'),
  chunkDir: (dir: string) => join(dir, 'chunks'),
  chunk: (dir: string, c: number) => join(dir, 'chunks', `c-${pad(c, 6)}`),
  dedupDir: (dir: string) => join(dir, 'dedup'),
  partition: (dir: string, p: number) => join(dir, 'dedup', `p-${pad(p, 3)}`),
  vectors: (dir: string) => join(dir, 'vectors.f16'),
  trained: (dir: string) => join(dir, 'trained.faiss'),
  pieceDir: (dir: string) => join(dir, 'pieces'),
  piece: (dir: string, shard: number, piece: number) =>
    join(dir, 'pieces', `s-${pad(shard, 3)}-p-${pad(piece, 4)}`),
  mineDir: (dir: string, job: string) => join(dir, 'mine', job),
  range: (dir: string, job: string, r: number) => join(dir, 'mine', job, `r-${pad(r, 6)}`),
};

export function ensureDirs(dir: string): void {
  for (const d of [layout.chunkDir(dir), layout.dedupDir(dir), layout.pieceDir(dir)]) {
    mkdirSync(d, { recursive: true });
  }
}

const fileSchema = z.object({ bytes: z.number().int().min(0), sha256: z.string().length(64) });
const markerSchema = z.object({
  files: z.record(z.string(), fileSchema),
  info: z.record(z.string(), z.unknown()),
});
export type Marker = z.infer<typeof markerSchema>;

export const markerPath = (base: string) => `${base}.done.json`;

/**
 * Publishes a job's outputs: each file `base.EXT` written durably, then the marker listing their sizes
 * and checksums with `info` (counts), last: the marker's presence means every file is complete.
 */
export function publish(
  base: string,
  files: Record<string, Uint8Array>,
  info: Record<string, unknown>,
): Marker {
  const marker: Marker = { files: {}, info };
  for (const [ext, bytes] of Object.entries(files)) {
    writeFileAtomicSync(`${base}.${ext}`, bytes);
    marker.files[ext] = { bytes: bytes.byteLength, sha256: sha256(bytes) };
  }
  writeFileAtomicSync(markerPath(base), Buffer.from(JSON.stringify(marker)));
  return marker;
}

/** Adds a file written by someone else (e.g. FAISS's writer) to a marker: its size and checksum. */
export function describe(path: string): Marker['files'][string] {
  const bytes = readFileSync(path);
  return { bytes: bytes.byteLength, sha256: sha256(bytes) };
}

export function writeMarker(base: string, marker: Marker): void {
  writeFileAtomicSync(markerPath(base), Buffer.from(JSON.stringify(marker)));
}

/**
 * The marker of a finished job, or undefined when there is none or it does not match its files. With
 * `deep`, every file's checksum is recomputed too (the coordinator's check before a stage moves on).
 */
export function readMarker(base: string, deep = false): Marker | undefined {
  let marker: Marker;
  try {
    marker = markerSchema.parse(JSON.parse(readFileSync(markerPath(base), 'utf8')));
  } catch {
    return undefined;
  }
  for (const [ext, f] of Object.entries(marker.files)) {
    const path = `${base}.${ext}`;
    const size = statSync(path, { throwIfNoEntry: false })?.size;
    if (size !== f.bytes) return undefined;
    if (deep && sha256(readFileSync(path)) !== f.sha256) return undefined;
  }
  return marker;
}

/** Reads one published file, checking it against its marker entry. */
export function readChecked(base: string, ext: string, marker: Marker): Buffer {
  const bytes = readFileSync(`${base}.${ext}`);
  const f = marker.files[ext];
  if (!f || bytes.byteLength !== f.bytes || sha256(bytes) !== f.sha256) {
    throw new ParamineError(
      'CHECKSUM_MISMATCH',
      `${base}.${ext} does not match its marker (size or SHA-256): the job's output changed after it finished; delete ${markerPath(base)} to redo it`,
    );
  }
  return bytes;
}

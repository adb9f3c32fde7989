/**
 * Checksums of an index's files, written into the manifest at build and checked at open, so a flipped
 * or truncated byte is an error (BAD_FILE) instead of a silently wrong answer: FAISS reads codes and ids
 * with no checksum of its own.
 *
 * Hashing everything at every start does not scale (a 10^9 index holds ~1 TB of shards and vectors.f16:
 * an hour of reading), so `auto` checks the size of every file, and the full sha256 only while the files
 * together are small; above that, the sha256 of 64 evenly spaced 64 KiB blocks (random reads, well
 * under a second), which catches truncation, replacement and damaged regions but not every single bit.
 * `paramine serve --verify full` reads every byte.
 */
import { createHash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256File } from '../durable.js';
import { ParamineError } from '../errors.js';

export type VerifyMode = 'auto' | 'full' | 'sampled' | 'off';

/** Under this total, `auto` reads every byte. */
export const FULL_VERIFY_BELOW_BYTES = 2 * 2 ** 30;
const BLOCKS = 64;
const BLOCK = 64 * 1024;

export interface FileDigest {
  sha256: string;
  bytes: number;
  sampleSha256: string;
}

/** The sha256 of the size and of BLOCKS evenly spaced blocks (the whole file when it is that small). */
export async function sampleSha256(path: string, bytes: number): Promise<string> {
  const hash = createHash('sha256').update(String(bytes));
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(BLOCK);
    const last = Math.max(0, bytes - BLOCK);
    const starts = new Set(Array.from({ length: BLOCKS }, (_, i) => Math.round((i * last) / (BLOCKS - 1))));
    for (const start of [...starts].sort((a, b) => a - b)) {
      const { bytesRead } = await fh.read(buf, 0, BLOCK, start);
      hash.update(buf.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
  return hash.digest('hex');
}

export async function fileDigest(path: string): Promise<FileDigest> {
  const { size } = await stat(path);
  return { sha256: await sha256File(path), bytes: size, sampleSha256: await sampleSha256(path, size) };
}

/** A file and the checksums recorded for it (a manifest's shards and vectors, a sealed segment's files). */
export type Checked = {
  file: string;
  sha256?: string | undefined;
  bytes?: number | undefined;
  sampleSha256?: string | undefined;
};

const bad = (path: string, file: string, what: string) =>
  new ParamineError('BAD_FILE', `${path}: ${what} (corrupted or replaced): restore the index or rebuild it`, {
    field: file,
  });

async function verifyFile(dir: string, f: Checked, full: boolean): Promise<void> {
  const path = join(dir, f.file);
  const size = await stat(path).then(
    (s) => s.size,
    (e: unknown) => {
      const missing = (e as { code?: string }).code === 'ENOENT';
      throw new ParamineError(
        missing ? 'FILE_NOT_FOUND' : 'BAD_FILE',
        missing
          ? `${path}: missing (the manifest lists it): restore the index or rebuild it`
          : `${path}: cannot read (${(e as Error).message})`,
        { field: f.file, cause: e },
      );
    },
  );
  if (f.bytes !== undefined && size !== f.bytes)
    throw bad(path, f.file, `${size} bytes, the manifest says ${f.bytes}`);
  // Indexes written before sampled checksums carry the full one only: check that.
  if (full || f.sampleSha256 === undefined) {
    if (f.sha256 === undefined) return;
    const actual = await sha256File(path);
    if (actual !== f.sha256)
      throw bad(path, f.file, `sha256 ${actual.slice(0, 12)}…, manifest says ${f.sha256.slice(0, 12)}…`);
    return;
  }
  const actual = await sampleSha256(path, size);
  if (actual !== f.sampleSha256)
    throw bad(path, f.file, "sampled blocks differ from the manifest's checksum");
}

/** Checks the files a manifest (or a sealed segment's record) gives checksums for (see the module doc for the modes). */
export async function verifyChecksums(
  dir: string,
  manifest: { shards: readonly Checked[]; vectors?: Checked | undefined },
  mode: VerifyMode = 'auto',
): Promise<void> {
  if (mode === 'off') return;
  const files: Checked[] = [...manifest.shards, ...(manifest.vectors ? [manifest.vectors] : [])];
  let full = mode === 'full';
  if (mode === 'auto') {
    const sizes = await Promise.all(
      files.map((f) =>
        stat(join(dir, f.file)).then(
          (s) => s.size,
          () => 0,
        ),
      ),
    );
    full = sizes.reduce((a, b) => a + b, 0) < FULL_VERIFY_BELOW_BYTES;
  }
  await Promise.all(files.map((f) => verifyFile(dir, f, full)));
}

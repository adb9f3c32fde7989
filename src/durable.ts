/**
 * Durable files, in one place: every writer that replaces a file does it as write to a temporary name, fsync
 * the file, rename over the target, fsync the directory, so after a crash the target is the old file or the
 * new one, never a torn one, and a rename that returned survives a power cut. And the one sha256 of a file.
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** The temporary name a writer fills before `path` is replaced (per process: two writers never share it). */
export const tempPathOf = (path: string): string => `${path}.tmp-${process.pid}`;

async function fsyncPath(path: string, flags: 'r' | 'r+'): Promise<void> {
  const fh = await open(path, flags);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function fsyncPathSync(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Some file systems refuse to fsync a directory: the rename happened, only its durability is not promised. */
const rethrowUnlessDirSyncRefused = (e: unknown) => {
  if (!['EINVAL', 'EISDIR', 'EPERM'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
};

/** fsync of a directory, so a rename in it is on disk. */
export async function fsyncDir(dir: string): Promise<void> {
  await fsyncPath(dir, 'r').catch(rethrowUnlessDirSyncRefused);
}

function fsyncDirSync(dir: string): void {
  try {
    fsyncPathSync(dir);
  } catch (e) {
    rethrowUnlessDirSyncRefused(e);
  }
}

/**
 * Removes the temporaries that writers of `path` left when their process died mid-write (a live process's
 * stays): for a resumed step whose output is large (an assembled vectors.f16), so crashes do not pile up copies.
 */
export async function dropStaleTemps(path: string): Promise<void> {
  const prefix = `${basename(path)}.tmp-`;
  for (const name of await readdir(dirname(path))) {
    const pid = name.startsWith(prefix) ? Number(name.slice(prefix.length)) : Number.NaN;
    if (Number.isInteger(pid) && !alive(pid)) await rm(join(dirname(path), name), { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Replaces `path` with what `write(tmp)` writes under a temporary name (any writer: a stream, FAISS's own
 * write_index, a file handle): then fsync, rename, fsync of the directory. On a failure the temporary file is
 * removed and `path` is untouched.
 */
export async function replaceFile(path: string, write: (tmp: string) => Promise<void>): Promise<void> {
  const tmp = tempPathOf(path);
  try {
    await write(tmp);
    await fsyncPath(tmp, 'r+');
    await rename(tmp, path);
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw e;
  }
  await fsyncDir(dirname(path));
}

/** `replaceFile` with the bytes or text given. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await replaceFile(path, async (tmp) => {
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(data);
    } finally {
      await fh.close();
    }
  });
}

/** The synchronous form, for the few writers that cannot await (queue markers, the spill of a batch). */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  const tmp = tempPathOf(path);
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  try {
    const fd = openSync(tmp, 'w');
    try {
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {}
    throw e;
  }
  fsyncDirSync(dirname(path));
}

/** Publishes a file already written in full under `from` (fsynced here) as `to`. */
export async function publishFile(from: string, to: string): Promise<void> {
  await fsyncPath(from, 'r+');
  await rename(from, to);
  await fsyncDir(dirname(to));
}

/** fsync of every file under `dir` and of the directories themselves, deepest first. */
async function fsyncTree(dir: string): Promise<void> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) await fsyncTree(path);
    else if (e.isFile()) await fsyncPath(path, 'r+');
  }
  await fsyncDir(dir);
}

/**
 * Replaces the directory `final` with `staging` (written in full, beside it on the same file system): every
 * file in it is fsynced first, the old directory is moved to `aside` and removed after, and the parent is
 * fsynced, so after a crash `final` is the old directory or the whole new one (a model, a domain).
 */
export async function replaceDir(final: string, staging: string, aside: string): Promise<void> {
  await fsyncTree(staging);
  await rm(aside, { recursive: true, force: true });
  await rename(final, aside).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw e;
  });
  await rename(staging, final);
  await fsyncDir(dirname(final));
  await rm(aside, { recursive: true, force: true });
}

/** Hex sha256 of bytes. */
export const sha256 = (bytes: Uint8Array | string): string =>
  createHash('sha256').update(bytes).digest('hex');

/** Hex sha256 of a file, streamed. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Whether anything is at `path` (a file or a directory). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

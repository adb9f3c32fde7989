/**
 * vectors.f16 of an index directory: every embedding the indexer encoded, as n x dim little-endian IEEE
 * half floats, row i = id i. Mining jobs read their query vectors from it instead of encoding the
 * sentences again (days at hundreds of millions of sentences). Reads are positional, so concurrent
 * reads on one open file are fine.
 *
 *   const vectors = await VectorFile.open(indexDir);   // undefined: built without --vectors f16
 *   const rows = await vectors.read(firstId, count);   // count x dim float32
 *   const some = await vectors.readIds([7, 3, 7]);      // rows in the order given
 */
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { ParamineError } from '../errors.js';
import { addonAvailable, HalfVectors } from '../native/index.js';
import { fromHalf, fromHalfInto } from './half.js';
import { readManifest } from './manifest.js';

/** Largest single read (the OS caps one read near 2 GiB). */
const MAX_READ_BYTES = 2 ** 30;
/** Ids at most this many rows apart are read in one go (reading the gap beats another syscall). */
const MAX_GAP_ROWS = 8;
/** Reads in flight at once in readIds. */
const READ_CONCURRENCY = 8;

export class VectorFile {
  readonly path: string;
  readonly count: number;
  readonly dim: number;
  #fh: FileHandle | undefined;
  /**
   * The addon's reader of the same file, where it is built: readIds gathers scattered rows with one pread
   * each on a worker thread (k-means reads thousands a group; one fs call each cost 4x more).
   */
  #rows: HalfVectors | undefined;

  private constructor(path: string, fh: FileHandle, count: number, dim: number, rows?: HalfVectors) {
    this.path = path;
    this.#fh = fh;
    this.count = count;
    this.dim = dim;
    this.#rows = rows;
  }

  /** The reader of a file whose size was checked. */
  static async #make(path: string, fh: FileHandle, count: number, dim: number): Promise<VectorFile> {
    try {
      const rows = count > 0 && addonAvailable() ? await HalfVectors.open(path, dim) : undefined;
      return new VectorFile(path, fh, count, dim, rows);
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  /** The kept embeddings of the index in `indexDir`, or undefined when its manifest records none. */
  static async open(indexDir: string): Promise<VectorFile | undefined> {
    const manifest = await readManifest(indexDir);
    const v = manifest.vectors;
    if (!v) return undefined;
    const path = join(indexDir, v.file);
    let fh: FileHandle;
    try {
      fh = await open(path, 'r');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        throw new ParamineError(
          'FILE_NOT_FOUND',
          `${path} is missing, but the manifest of ${indexDir} lists it`,
          { field: v.file, cause: e },
        );
      }
      throw new ParamineError('BAD_FILE', `${path}: ${(e as Error).message}`, { field: v.file, cause: e });
    }
    try {
      const size = (await fh.stat()).size;
      const expected = v.count * v.dim * 2;
      if (size !== expected) {
        throw new ParamineError(
          'BAD_FILE',
          `${path}: ${size} bytes, but ${v.count} x ${v.dim} half floats take ${expected}`,
          { field: v.file },
        );
      }
    } catch (e) {
      await fh.close();
      throw e;
    }
    return VectorFile.#make(path, fh, v.count, v.dim);
  }

  /** A half-float file outside an index directory (a build's work/vectors.f16); its size must match. */
  static async openFile(path: string, count: number, dim: number): Promise<VectorFile> {
    let fh: FileHandle;
    try {
      fh = await open(path, 'r');
    } catch (e) {
      throw new ParamineError('FILE_NOT_FOUND', `${path}: ${(e as Error).message}`, { cause: e });
    }
    const size = (await fh.stat()).size;
    if (size !== count * dim * 2) {
      await fh.close();
      throw new ParamineError(
        'BAD_FILE',
        `${path}: ${size} bytes, but ${count} x ${dim} half floats take ${count * dim * 2}`,
      );
    }
    return VectorFile.#make(path, fh, count, dim);
  }

  /** Rows firstId .. firstId + count - 1, as count x dim float32. */
  async read(firstId: number, count: number): Promise<Float32Array> {
    const fh = this.#handle();
    if (!Number.isSafeInteger(firstId) || !Number.isSafeInteger(count) || count < 0) {
      throw new ParamineError('BAD_INPUT', `invalid row range ${firstId} + ${count}`, { field: 'ids' });
    }
    if (firstId < 0 || firstId + count > this.count) {
      throw new ParamineError(
        'BAD_INPUT',
        `rows [${firstId}, ${firstId + count}) are outside [0, ${this.count})`,
        { field: 'ids' },
      );
    }
    const halves = new Uint16Array(count * this.dim);
    await this.#readInto(fh, halves, firstId);
    return fromHalf(halves);
  }

  /**
   * Rows of arbitrary ids (repeats allowed), in the order given, as ids.length x dim float32: written into
   * `into` when given (exactly that long; a caller reading chunk after chunk reuses its buffers).
   */
  async readIds(ids: readonly number[], into?: Float32Array): Promise<Float32Array> {
    const fh = this.#handle();
    ids.forEach((id, i) => {
      if (!Number.isInteger(id) || id < 0 || id >= this.count) {
        throw new ParamineError('BAD_INPUT', `ids[${i}] = ${id} is outside [0, ${this.count})`, {
          field: `ids[${i}]`,
        });
      }
    });
    const dim = this.dim;
    if (into !== undefined && into.length !== ids.length * dim) {
      throw new ParamineError('BAD_INPUT', `into holds ${into.length} floats, not ${ids.length} x ${dim}`, {
        field: 'into',
      });
    }
    if (this.#rows) return this.#rows.gather(BigInt64Array.from(ids, BigInt), into);
    const out = into ?? new Float32Array(ids.length * dim);
    if (ids.length === 0) return out;
    // float32 bit patterns, filled row by row
    const outBits = new Uint32Array(out.buffer, out.byteOffset, out.length);
    // Sorted positions, cut into runs of nearby ids: one read per run.
    const order = Array.from(ids.keys()).sort((a, b) => ids[a]! - ids[b]!);
    const runs: Array<{ from: number; to: number }> = []; // [from, to) into `order`
    let from = 0;
    for (let k = 1; k <= order.length; k++) {
      if (k === order.length || ids[order[k]!]! - ids[order[k - 1]!]! > MAX_GAP_ROWS) {
        runs.push({ from, to: k });
        from = k;
      }
    }
    let next = 0;
    const worker = async () => {
      while (next < runs.length) {
        const { from, to } = runs[next++]!;
        const first = ids[order[from]!]!;
        const rows = ids[order[to - 1]!]! - first + 1;
        const halves = new Uint16Array(rows * dim);
        await this.#readInto(fh, halves, first);
        for (let k = from; k < to; k++) {
          const at = order[k]!;
          fromHalfInto(halves, (ids[at]! - first) * dim, outBits, at * dim, dim);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, runs.length) }, worker));
    return out;
  }

  async close(): Promise<void> {
    const fh = this.#fh;
    const rows = this.#rows;
    this.#fh = undefined;
    this.#rows = undefined;
    await rows?.close();
    await fh?.close();
  }

  #handle(): FileHandle {
    if (!this.#fh) throw new ParamineError('INDEX_CLOSED', `${this.path} is closed`);
    return this.#fh;
  }

  /** Fills `halves` from row `firstRow` on, in reads of at most MAX_READ_BYTES. */
  async #readInto(fh: FileHandle, halves: Uint16Array, firstRow: number): Promise<void> {
    const bytes = new Uint8Array(halves.buffer, halves.byteOffset, halves.byteLength);
    const start = firstRow * this.dim * 2;
    let off = 0;
    while (off < bytes.length) {
      const want = Math.min(bytes.length - off, MAX_READ_BYTES);
      const { bytesRead } = await fh.read(bytes, off, want, start + off);
      if (bytesRead === 0) {
        throw new ParamineError('BAD_FILE', `${this.path}: ended at byte ${start + off} (truncated?)`);
      }
      off += bytesRead;
    }
  }
}

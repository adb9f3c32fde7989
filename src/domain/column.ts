/**
 * A float32 column beside an index: row i = sentence id i, little-endian, no header (its count and
 * identity live in domains.json). The service memory-maps it (the OS pages in what candidates touch and
 * shares the pages between processes); without the native addon it is read into memory instead.
 * ColumnWriter fills a column in place and renames it into its final name when complete.
 */
import { open as openFile, readFile, stat } from 'node:fs/promises';
import { publishFile } from '../durable.js';
import { ParamineError } from '../errors.js';
import { mapFile } from '../native/index.js';

/** Rows per window: 2^28 float32 rows = 1 GiB, page-aligned and well under an ArrayBuffer's limit. */
export const WINDOW_ROWS = 2 ** 28;

export class Column {
  readonly path: string;
  /** The rows in windows of WINDOW_ROWS (the last shorter): a 10^9-row column is four. */
  readonly windows: readonly Float32Array[];
  readonly count: number;
  readonly mapped: boolean;

  private constructor(path: string, windows: Float32Array[], count: number, mapped: boolean) {
    this.path = path;
    this.windows = windows;
    this.count = count;
    this.mapped = mapped;
  }

  /** Opens a column of exactly `count` rows. */
  static async open(path: string, count: number): Promise<Column> {
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch (e) {
      throw new ParamineError('FILE_NOT_FOUND', `${path} is missing`, { cause: e });
    }
    if (size !== count * 4) {
      throw new ParamineError(
        'BAD_FILE',
        `${path}: ${size} bytes, but ${count} float32 rows take ${count * 4}`,
      );
    }
    const windows: Float32Array[] = [];
    for (let first = 0; first < count || windows.length === 0; first += WINDOW_ROWS) {
      const rows = Math.min(WINDOW_ROWS, count - first);
      const mapped = mapFile(path, first * 4, rows * 4);
      if (mapped === undefined) break;
      windows.push(new Float32Array(mapped, 0, rows));
    }
    if (windows.length > 0) return new Column(path, windows, count, true);
    const buf = await readFile(path);
    const values = new Float32Array(count);
    new Uint8Array(values.buffer).set(buf);
    return new Column(path, [values], count, false);
  }

  /** Row `id`, or NaN outside the column. */
  get(id: number): number {
    if (!(id >= 0 && id < this.count)) return Number.NaN;
    return this.windows[Math.floor(id / WINDOW_ROWS)]![id % WINDOW_ROWS]!;
  }

  /** A copy of every row (tests and small columns). */
  toArray(): Float32Array {
    const out = new Float32Array(this.count);
    let at = 0;
    for (const w of this.windows) {
      out.set(w, at);
      at += w.length;
    }
    return out;
  }
}

/** Writes rows at their positions into `path`.partial; finish() syncs and renames it to `path`. */
export class ColumnWriter {
  readonly path: string;
  readonly partial: string;
  private constructor(
    path: string,
    private readonly fh: Awaited<ReturnType<typeof openFile>>,
  ) {
    this.path = path;
    this.partial = `${path}.partial`;
  }

  /** Opens (or re-opens, to resume) the partial file of a column of `count` rows. */
  static async open(path: string, count: number): Promise<ColumnWriter> {
    let fh: Awaited<ReturnType<typeof openFile>>;
    try {
      fh = await openFile(`${path}.partial`, 'r+');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      fh = await openFile(`${path}.partial`, 'w+');
    }
    await fh.truncate(count * 4);
    return new ColumnWriter(path, fh);
  }

  async write(firstId: number, values: Float32Array): Promise<void> {
    const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
    let off = 0;
    while (off < bytes.length) {
      const { bytesWritten } = await this.fh.write(bytes, off, bytes.length - off, firstId * 4 + off);
      off += bytesWritten;
    }
  }

  /** Makes what was written durable (before a progress record says it is there). */
  async sync(): Promise<void> {
    await this.fh.datasync();
  }

  /** Reads rows back (for the distribution once every row is written). */
  async read(firstId: number, count: number): Promise<Float32Array> {
    const out = new Float32Array(count);
    const bytes = new Uint8Array(out.buffer);
    let off = 0;
    while (off < bytes.length) {
      const { bytesRead } = await this.fh.read(bytes, off, bytes.length - off, firstId * 4 + off);
      if (bytesRead === 0) throw new ParamineError('BAD_FILE', `${this.partial}: shorter than expected`);
      off += bytesRead;
    }
    return out;
  }

  async finish(): Promise<void> {
    await this.fh.close();
    await publishFile(this.partial, this.path);
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}

/**
 * `paramine index --embeddings A.npy B.npy …`: vectors computed elsewhere (a GPU box embeds 4x10^8
 * sentences in hours; CPUs take core-weeks), one .npy per --input file, row r - 1 = record r of that file
 * (docs/embeddings.md). Nothing is encoded except a check sample: misaligned rows (one line added or
 * dropped upstream) are the classic failure, and they look like any other vectors, so a few sentences of
 * every checkpoint are re-encoded and must match their rows.
 */
import { existsSync } from 'node:fs';
import { type FileHandle, open, readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import { fromHalf, prng } from '../index/index.js';

/** Mean cosine a checkpoint's re-encoded sample must reach (misaligned rows score ~0.1-0.5; an int8 or
 * fp16 copy of the same model >= 0.97). */
export const MIN_MEAN_COSINE = 0.9;

export interface NpyHeader {
  dtype: 'f2' | 'f4';
  rows: number;
  dim: number;
  dataOffset: number;
}

/** Parses a .npy header (format 1.0-3.0): little-endian float16/float32, C order, 2-d. */
export function parseNpyHeader(buf: Uint8Array, path: string): NpyHeader {
  const bad = (why: string) => new ParamineError('BAD_FILE', `${path}: ${why}`, { field: 'embeddings' });
  const magic = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];
  if (buf.length < 10 || magic.some((b, i) => buf[i] !== b)) throw bad('not a .npy file');
  const major = buf[6] as number;
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const headerLen = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  if (buf.length < start + headerLen) throw bad('truncated header');
  const text = new TextDecoder('latin1').decode(buf.subarray(start, start + headerLen));
  const descr = /'descr':\s*'([^']+)'/.exec(text)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(text)?.[1];
  const shape = /'shape':\s*\((\d+),\s*(\d+),?\s*\)/.exec(text);
  if (descr !== '<f2' && descr !== '<f4')
    throw bad(`dtype ${descr ?? '?'}; expected float16 or float32 (<f2, <f4)`);
  if (fortran !== 'False') throw bad('Fortran order; save a C-ordered array');
  if (!shape) throw bad('not a 2-d array (rows, dim)');
  return {
    dtype: descr === '<f2' ? 'f2' : 'f4',
    rows: Number(shape[1]),
    dim: Number(shape[2]),
    dataOffset: start + headerLen,
  };
}

/** One .npy file, read by row ranges. */
export class NpyFile {
  readonly path: string;
  readonly header: NpyHeader;
  readonly #fh: FileHandle;

  private constructor(path: string, fh: FileHandle, header: NpyHeader) {
    this.path = path;
    this.#fh = fh;
    this.header = header;
  }

  static async open(path: string): Promise<NpyFile> {
    const fh = await open(path, 'r').catch((e: unknown) => {
      throw new ParamineError('FILE_NOT_FOUND', `${path}: ${(e as Error).message}`, {
        field: 'embeddings',
        cause: e,
      });
    });
    try {
      const head = new Uint8Array(4096);
      const { bytesRead } = await fh.read(head, 0, head.length, 0);
      const header = parseNpyHeader(head.subarray(0, bytesRead), path);
      const width = header.dtype === 'f2' ? 2 : 4;
      const size = (await fh.stat()).size;
      if (size !== header.dataOffset + header.rows * header.dim * width) {
        throw new ParamineError(
          'BAD_FILE',
          `${path}: ${size} bytes, the header promises ${header.rows} x ${header.dim}`,
          {
            field: 'embeddings',
          },
        );
      }
      return new NpyFile(path, fh, header);
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  /** Rows first .. first + count - 1 as float32. */
  async read(first: number, count: number): Promise<Float32Array> {
    const { dim, dtype, dataOffset } = this.header;
    const width = dtype === 'f2' ? 2 : 4;
    const bytes = new Uint8Array(count * dim * width);
    let off = 0;
    while (off < bytes.length) {
      const { bytesRead } = await this.#fh.read(
        bytes,
        off,
        bytes.length - off,
        dataOffset + first * dim * width + off,
      );
      if (bytesRead === 0)
        throw new ParamineError('BAD_FILE', `${this.path}: truncated`, { field: 'embeddings' });
      off += bytesRead;
    }
    return dtype === 'f2' ? fromHalf(new Uint16Array(bytes.buffer)) : new Float32Array(bytes.buffer);
  }

  close(): Promise<void> {
    return this.#fh.close();
  }
}

/** Scales each row to unit length in place (embeddings may come unnormalized; zero rows stay zero). */
function normalizeRows(x: Float32Array, dim: number): Float32Array {
  for (let off = 0; off < x.length; off += dim) {
    let s = 0;
    for (let j = 0; j < dim; j++) s += (x[off + j] as number) ** 2;
    const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
    for (let j = 0; j < dim; j++) x[off + j] = (x[off + j] as number) * inv;
  }
  return x;
}

/** Optional NAME.npy.json beside a .npy: which model made it (checked against --model). */
const sidecarSchema = z.object({ model: z.string().min(1), sha256: z.string().optional() }).loose();

export interface Position {
  fileIndex: number;
  /** 1-based record number in its file. */
  record: number;
}

export interface CheckEncoder {
  readonly dim: number;
  encode(texts: string[]): Promise<Float32Array>;
}

export class ProvidedEmbeddings {
  readonly #files: NpyFile[];
  #checked = 0;

  private constructor(files: NpyFile[]) {
    this.#files = files;
  }

  /** Opens one .npy per input, checking shape, dtype and the model named by any sidecar. */
  static async open(
    paths: readonly string[],
    inputs: readonly string[],
    model: { id: string; sha256: string; dim: number },
  ) {
    if (paths.length !== inputs.length) {
      throw new ParamineError(
        'BAD_INPUT',
        `${paths.length} --embeddings files for ${inputs.length} --input files`,
        {
          field: 'embeddings',
        },
      );
    }
    const files: NpyFile[] = [];
    try {
      for (const path of paths) {
        const f = await NpyFile.open(path);
        files.push(f);
        if (f.header.dim !== model.dim) {
          throw new ParamineError(
            'DIM_MISMATCH',
            `${path} holds ${f.header.dim}-d vectors; ${model.id} makes ${model.dim}-d`,
            {
              field: 'embeddings',
            },
          );
        }
        if (existsSync(`${path}.json`)) {
          const side = sidecarSchema.parse(JSON.parse(await readFile(`${path}.json`, 'utf8')));
          if (
            side.model !== model.id ||
            (side.sha256 !== undefined && side.sha256.toLowerCase() !== model.sha256)
          ) {
            throw new ParamineError(
              'MODEL_MISMATCH',
              `${path} was made with ${side.model}, not --model ${model.id}`,
              {
                field: 'embeddings',
              },
            );
          }
        }
      }
    } catch (e) {
      await Promise.all(files.map((f) => f.close()));
      throw e;
    }
    return new ProvidedEmbeddings(files);
  }

  /** Sentences compared with the encoder so far. */
  get checked(): number {
    return this.#checked;
  }

  /** Refuses a file whose row count differs from its record count (misaligned by construction). */
  checkRecordCount(fileIndex: number, records: number): void {
    const f = this.#files[fileIndex] as NpyFile;
    if (f.header.rows !== records) {
      throw new ParamineError(
        'EMBEDDINGS_MISMATCH',
        `${f.path} has ${f.header.rows} rows but its input has ${records} records: every line (or table row) needs its row`,
        { field: 'embeddings' },
      );
    }
  }

  /** Unit-length vectors of the records at `positions` (in one file order, ascending). */
  async vectors(positions: readonly Position[], dim: number): Promise<Float32Array> {
    const out = new Float32Array(positions.length * dim);
    let i = 0;
    while (i < positions.length) {
      // One read per run of consecutive records of one file.
      const p = positions[i] as Position;
      let j = i + 1;
      while (
        j < positions.length &&
        positions[j]?.fileIndex === p.fileIndex &&
        (positions[j] as Position).record - p.record === j - i
      )
        j++;
      const f = this.#files[p.fileIndex] as NpyFile;
      if (p.record + (j - i) - 1 > f.header.rows) {
        throw new ParamineError(
          'EMBEDDINGS_MISMATCH',
          `${f.path} has ${f.header.rows} rows; its input has more records`,
          {
            field: 'embeddings',
          },
        );
      }
      out.set(await f.read(p.record - 1, j - i), i * dim);
      i = j;
    }
    return normalizeRows(out, dim);
  }

  /**
   * Re-encodes `count` seeded rows of a checkpoint and refuses the input when their mean cosine to the
   * given rows is below MIN_MEAN_COSINE.
   */
  async check(
    texts: readonly string[],
    positions: readonly Position[],
    vectors: Float32Array,
    encoder: CheckEncoder,
    count: number,
    seed: number,
  ) {
    if (texts.length === 0) return;
    const rand = prng(seed);
    const picks = [
      ...new Set(
        Array.from({ length: Math.min(count, texts.length) }, () => Math.floor(rand() * texts.length)),
      ),
    ];
    const dim = encoder.dim;
    const encoded = await encoder.encode(picks.map((i) => texts[i] as string));
    const cos = picks.map((row, j) => {
      let s = 0;
      for (let d = 0; d < dim; d++)
        s += (encoded[j * dim + d] as number) * (vectors[row * dim + d] as number);
      return s;
    });
    this.#checked += picks.length;
    const mean = cos.reduce((a, b) => a + b, 0) / cos.length;
    if (mean < MIN_MEAN_COSINE) {
      const worst = picks[cos.indexOf(Math.min(...cos))] as number;
      const p = positions[worst] as Position;
      throw new ParamineError(
        'EMBEDDINGS_MISMATCH',
        `--embeddings do not match the sentences: ${picks.length} re-encoded sentences average cosine ` +
          `${mean.toFixed(3)} (< ${MIN_MEAN_COSINE}) with their rows; e.g. ${(this.#files[p.fileIndex] as NpyFile).path} ` +
          `row ${p.record - 1} vs record ${p.record} "${(texts[worst] as string).slice(0, 60)}" (cosine ` +
          `${Math.min(...cos).toFixed(3)}). Rows misaligned with the lines, or another model than --model?`,
        { field: 'embeddings' },
      );
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#files.map((f) => f.close()));
  }
}

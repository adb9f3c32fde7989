/** Opens a corpus or pair file as a text stream, gunzipping by magic bytes rather than by extension. */
import { createReadStream } from 'node:fs';
import { open as openFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { ParamineError } from '../errors.js';

export type FileFormat = 'txt' | 'jsonl' | 'json' | 'tsv' | 'csv' | 'src' | 'srt';
/** The corpus formats, for `--format` where a file's extension does not say (ParaSCI's .src/.tgt are text). */
export const CORPUS_FORMATS = ['txt', 'jsonl', 'tsv', 'csv', 'srt'] as const;
export type CorpusFormat = (typeof CORPUS_FORMATS)[number];

/** Format from the name, `.gz` ignored: corpus.jsonl.gz -> jsonl; `given` (a --format) wins. */
export function formatOf(path: string, given?: FileFormat): FileFormat | undefined {
  if (given !== undefined) return given;
  const name = basename(path).toLowerCase().replace(/\.gz$/, '');
  const ext = name.slice(name.lastIndexOf('.') + 1);
  if (ext === 'ndjson') return 'jsonl';
  return (['txt', 'jsonl', 'json', 'tsv', 'csv', 'src', 'srt'] as const).find((f) => f === ext);
}

export async function assertReadable(path: string, field = 'input'): Promise<void> {
  try {
    const s = await stat(path);
    if (!s.isFile()) throw new ParamineError('BAD_FILE', `${path} is not a file`, { field });
  } catch (e) {
    if (e instanceof ParamineError) throw e;
    throw new ParamineError('FILE_NOT_FOUND', `cannot read ${path}: no such file`, { field, cause: e });
  }
}

async function isGzip(path: string): Promise<boolean> {
  const fh = await openFile(path, 'r');
  try {
    const buf = Buffer.alloc(2);
    const { bytesRead } = await fh.read(buf, 0, 2, 0);
    return bytesRead === 2 && buf[0] === 0x1f && buf[1] === 0x8b;
  } finally {
    await fh.close();
  }
}

/**
 * A stream of the file's content (gunzipped when it is gzip), and how many bytes of the file itself
 * were read so far: progress and ETA follow file bytes, which are known before the sentences are.
 */
export async function openText(path: string): Promise<{ stream: Readable; bytesRead: () => number }> {
  await assertReadable(path);
  const gz = await isGzip(path);
  if (!gz && path.endsWith('.gz')) {
    throw new ParamineError('BAD_FILE', `${path}: named .gz but is not gzip-compressed`);
  }
  const raw = createReadStream(path, { highWaterMark: 1 << 20 });
  const bytesRead = () => raw.bytesRead;
  if (!gz) return { stream: raw, bytesRead };
  const gunzip = createGunzip();
  raw.on('error', (e) => gunzip.destroy(e));
  return { stream: raw.pipe(gunzip), bytesRead };
}

/** Errors met while streaming a file, re-labelled so the user learns which file is broken. */
export function readError(path: string, e: unknown): ParamineError {
  if (e instanceof ParamineError) return e;
  const err = e as NodeJS.ErrnoException;
  if (typeof err.code === 'string' && err.code.startsWith('Z_')) {
    return new ParamineError('BAD_FILE', `${path}: unreadable gzip data (${err.message})`, { cause: e });
  }
  return new ParamineError('BAD_FILE', `${path}: read failed (${err.message})`, { cause: e });
}

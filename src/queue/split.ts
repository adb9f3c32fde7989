/**
 * Splits the inputs into chunks, one embed job each: plain .txt/.jsonl files by byte offsets at line
 * starts (one sequential scan counting newlines, `lines` lines a chunk), compressed files and tables as
 * whole files (their records cannot be found without reading from the start; split such inputs into
 * several files for parallelism).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { type CorpusFormat, formatOf } from '../corpus/index.js';
import type { ChunkSpec } from './state.js';

function isGzip(fd: number): boolean {
  const b = Buffer.alloc(2);
  return readSync(fd, b, 0, 2, 0) === 2 && b[0] === 0x1f && b[1] === 0x8b;
}

/** Chunks of one file: byte ranges of `lines` lines each (the last may be shorter). */
export function splitFile(path: string, fileIndex: number, lines: number, given?: CorpusFormat): ChunkSpec[] {
  const format = formatOf(path, given);
  const fd = openSync(path, 'r');
  try {
    if ((format !== 'txt' && format !== 'jsonl') || isGzip(fd)) return [{ fileIndex, whole: true }];
    const out: ChunkSpec[] = [];
    const buf = Buffer.alloc(1 << 22);
    let pos = 0;
    let start = 0;
    let before = 0;
    let inChunk = 0;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) break;
      let at = buf.indexOf(10, 0);
      while (at >= 0 && at < n) {
        inChunk++;
        if (inChunk === lines) {
          const end = pos + at + 1;
          out.push({ fileIndex, start, end, before });
          before += inChunk;
          inChunk = 0;
          start = end;
        }
        at = buf.indexOf(10, at + 1);
      }
      pos += n;
    }
    if (pos > start) out.push({ fileIndex, start, end: pos, before });
    return out;
  } finally {
    closeSync(fd);
  }
}

export function splitInputs(paths: readonly string[], lines: number, format?: CorpusFormat): ChunkSpec[] {
  return paths.flatMap((p, i) => splitFile(p, i, lines, format));
}

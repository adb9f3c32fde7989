/**
 * Streams sentences from corpus files (docs/formats.md): .txt one per line, .jsonl objects with
 * `text` (+ `id` and any metadata), .tsv/.csv with a `text` column; any of them gzip-compressed.
 * Each record carries file:line so errors point at it, and a position so a build can resume after it.
 */
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import { readDocuments } from './documents.js';
import { type CorpusFormat, formatOf, openText, readError } from './open.js';
import { type BadRecord, type CorpusRecord, parseTextLine } from './records.js';

export type { BadRecord, CorpusRecord };

export interface ReadOptions {
  /** Skip records up to and including this position (resume). */
  after?: { fileIndex: number; record: number };
  /** 'fail' throws on the first bad record; 'skip' yields it as a BadRecord and goes on. */
  onBadRecord?: 'fail' | 'skip';
  /** Updated as files are read: bytes of the input files consumed so far (for progress and ETA). */
  stats?: { bytesRead: number };
  /** Every file's format, whatever its extension (`--format`); default: from the extension. */
  format?: CorpusFormat | undefined;
  /**
   * Records are documents, read as their sentences (documents.ts): .txt blank-line separated, .jsonl one a
   * line. Subtitles (.srt) are always read so.
   */
  documents?: boolean | undefined;
  /** The documents' language (BCP 47) where a record does not give its own `lang`; default en. */
  lang?: string | undefined;
  /** Minutes a subtitle document spans (documents.ts; default DEFAULT_SEGMENT_MINUTES). */
  segmentMinutes?: number | undefined;
}

const jsonLine = z.looseObject({ text: z.string() });

export async function* readSentences(
  files: readonly string[],
  options: ReadOptions = {},
): AsyncGenerator<CorpusRecord | BadRecord> {
  const onBad = options.onBadRecord ?? 'fail';
  let doneBytes = 0;
  for (const [fileIndex, path] of files.entries()) {
    const size = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
    if (options.after && fileIndex < options.after.fileIndex) {
      doneBytes += size;
      continue;
    }
    const skipThrough = options.after?.fileIndex === fileIndex ? options.after.record : 0;
    const format = formatOf(path, options.format);
    if (format === 'srt' || options.documents) {
      yield* documentFile(path, fileIndex, format, skipThrough, options);
      doneBytes += size;
      continue;
    }
    if (format !== 'txt' && format !== 'jsonl' && format !== 'tsv' && format !== 'csv') {
      throw new ParamineError(
        'BAD_FILE',
        `${path}: unknown corpus format; use .txt, .jsonl, .tsv or .csv (optionally .gz), or name it with --format`,
        { field: 'input' },
      );
    }
    const { stream, bytesRead } = await openText(path);
    const rows =
      format === 'tsv' || format === 'csv' ? tableRows(path, stream, format) : lineRows(stream, format);
    try {
      for await (const row of rows) {
        if (options.stats) options.stats.bytesRead = doneBytes + bytesRead();
        if (row.record <= skipThrough) continue;
        yield toRecord(path, fileIndex, row, onBad);
      }
    } catch (e) {
      throw readError(path, e);
    }
    doneBytes += size;
  }
}

async function* documentFile(
  path: string,
  fileIndex: number,
  format: string | undefined,
  skipThrough: number,
  options: ReadOptions,
): AsyncGenerator<CorpusRecord | BadRecord> {
  if (format !== 'txt' && format !== 'jsonl' && format !== 'srt') {
    throw new ParamineError('BAD_FILE', `${path}: documents are read from .txt, .jsonl or .srt files`, {
      field: 'input',
    });
  }
  const docs = {
    lang: options.lang,
    segmentMinutes: options.segmentMinutes,
    onBadRecord: options.onBadRecord ?? 'fail',
  };
  try {
    for await (const rec of readDocuments(path, fileIndex, format, docs)) {
      if (rec.record > skipThrough) yield rec;
    }
  } catch (e) {
    throw readError(path, e);
  }
}

/** Lines of a plain (uncompressed) .txt or .jsonl file from byte `start` (a line start) to `end`. */
export interface LineRange {
  start: number;
  end: number;
  /** Records (lines) before `start`: the first line read is record firstRecord + 1. */
  before: number;
}

/**
 * The records of one byte range of a plain .txt/.jsonl file, numbered as readSentences numbers them: a
 * distributed build reads its chunks this way, each chunk independently of the others.
 */
export async function* readSentenceRange(
  path: string,
  fileIndex: number,
  range: LineRange,
  onBadRecord: 'fail' | 'skip' = 'fail',
  given?: CorpusFormat,
): AsyncGenerator<CorpusRecord | BadRecord> {
  const format = formatOf(path, given);
  if (format !== 'txt' && format !== 'jsonl') {
    throw new ParamineError('BAD_FILE', `${path}: only plain .txt and .jsonl files are read by byte range`);
  }
  if (range.end <= range.start) return;
  const stream = createReadStream(path, { start: range.start, end: range.end - 1, highWaterMark: 1 << 20 });
  try {
    for await (const row of lineRows(stream, format, range.before)) {
      yield toRecord(path, fileIndex, row, onBadRecord);
    }
  } catch (e) {
    throw readError(path, e);
  }
}

/** A parsed row as the record readers yield it; a bad one throws (fail) or is yielded as such (skip). */
function toRecord(
  path: string,
  fileIndex: number,
  row: Row,
  onBad: 'fail' | 'skip',
): CorpusRecord | BadRecord {
  const where = `${path}:${row.line}`;
  if ('error' in row) {
    const error = new ParamineError('BAD_FILE', `${where}: ${row.error}`, { field: where });
    if (onBad === 'fail') throw error;
    return { fileIndex, record: row.record, where, error };
  }
  return row.meta === undefined
    ? { fileIndex, record: row.record, where, text: row.text }
    : { fileIndex, record: row.record, where, text: row.text, meta: row.meta };
}

type Row =
  | { record: number; line: number; text: string; meta?: Record<string, unknown> }
  | { record: number; line: number; error: string };

async function* lineRows(stream: Readable, format: 'txt' | 'jsonl', before = 0): AsyncGenerator<Row> {
  const rl = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let n = before;
  for await (const line of rl) {
    n++;
    if (format === 'txt') {
      yield { record: n, line: n, text: line };
      continue;
    }
    if (line.trim() === '') {
      yield { record: n, line: n, text: '' };
      continue;
    }
    const r = parseTextLine(line, jsonLine);
    if ('error' in r) {
      yield { record: n, line: n, error: r.error };
      continue;
    }
    const { text, ...meta } = r.value;
    yield Object.keys(meta).length ? { record: n, line: n, text, meta } : { record: n, line: n, text };
  }
}

async function* tableRows(path: string, stream: Readable, format: 'tsv' | 'csv'): AsyncGenerator<Row> {
  const parser = stream.pipe(
    parse({
      delimiter: format === 'tsv' ? '\t' : ',',
      // TSV corpora carry quotes as plain characters; CSV follows RFC 4180 with some slack.
      quote: format === 'tsv' ? false : '"',
      relax_quotes: true,
      relax_column_count: true,
      skip_empty_lines: false,
      bom: true,
      info: true,
    }),
  );
  // pipe() does not forward errors: a truncated gzip would otherwise end the table silently.
  stream.on('error', (e) => parser.destroy(e));
  let header: string[] | undefined;
  let textCol = -1;
  let n = 0;
  for await (const { record, info } of parser as AsyncIterable<{
    record: string[];
    info: { lines: number };
  }>) {
    if (!header) {
      header = record.map((h) => h.trim());
      textCol = header.indexOf('text');
      if (textCol < 0) {
        throw new ParamineError(
          'BAD_FILE',
          `${path}:1: no "text" column in the header (${header.join(', ')})`,
        );
      }
      continue;
    }
    n++;
    const text = record[textCol];
    if (text === undefined) {
      yield { record: n, line: info.lines, error: 'row has no value in the "text" column' };
      continue;
    }
    const meta: Record<string, unknown> = {};
    for (const [i, name] of header.entries())
      if (i !== textCol && record[i] !== undefined) meta[name] = record[i];
    yield Object.keys(meta).length
      ? { record: n, line: info.lines, text, meta }
      : { record: n, line: info.lines, text };
  }
}

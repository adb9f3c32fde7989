/**
 * Labeled sentence pairs for benchmarks and training (docs/formats.md), detected from the file:
 * - `.tsv` / `.csv` with a header naming the two texts (`s1`/`s2`, `sentence1`/`sentence2`, `txt1`/`txt2`, MRPC's
 *   `#1 String`/`#2 String`; case-insensitive) and optionally a label column (`label`, `Quality`). TSV is read
 *   with quoting off (MRPC has bare `"` inside fields); CSV follows RFC 4180 (MultiPIT).
 * - `.json` / `.jsonl`: a JSON array (Turku) or one object per line, with the same keys. Which of the two is
 *   decided by the first character, not the extension.
 * - `X.src` whose line-aligned twin `X.tgt` exists (ParaSCI); `X.tgt` may be given too. No labels: every pair
 *   is a positive and `label` stays undefined.
 * Any of them may be gzip-compressed (open.ts looks at the magic bytes). Label strings are kept exactly as the
 * data has them (a JSON number label becomes its decimal string). Texts are kept as they are too; a text that
 * is empty or only whitespace is an error, as is a row with a different number of columns from the header,
 * an invalid JSON line, a missing text field, or a label present on some records and missing on others.
 * Every error is a ParamineError('BAD_FILE') whose message starts with, and whose `field` is, file:line.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { parse } from 'csv-parse';
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import { formatOf, openText, readError } from './open.js';

export interface LabeledPair {
  s1: string;
  s2: string;
  /** As the data has it; undefined when the file has no labels (all pairs positive). */
  label?: string;
  /** file:line of the record (its first line, for a record spanning several). */
  where: string;
}

/** Names of the two text columns / keys, in order of preference; matched case-insensitively. */
export const TEXT_COLUMNS: ReadonlyArray<readonly [string, string]> = [
  ['s1', 's2'],
  ['sentence1', 'sentence2'],
  ['txt1', 'txt2'],
  ['#1 string', '#2 string'],
];
/** Names of the label column / key, in order of preference; matched case-insensitively. */
export const LABEL_COLUMNS: readonly string[] = ['label', 'quality'];

function bad(where: string, message: string): ParamineError {
  return new ParamineError('BAD_FILE', `${where}: ${message}`, { field: where });
}

const expectedNames = TEXT_COLUMNS.map(([a, b]) => `${a}/${b}`).join(', ');

/** `"a", "b", … (12 more)`: header or object keys for a message, kept short. */
function listNames(names: string[]): string {
  const shown = names.slice(0, 8).map((n) => JSON.stringify(n.length > 40 ? `${n.slice(0, 40)}…` : n));
  return (shown.join(', ') || 'nothing') + (names.length > 8 ? `, … (${names.length - 8} more)` : '');
}

/**
 * A held-out split's 1-based file lines (header = line 1), from a JSON file with `lines` (the model cards'
 * `mrpc-heldout.json`).
 */
export function heldoutLines(file: string): Set<number> {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ParamineError('BAD_FILE', `${file}: ${(e as Error).message}`, { field: 'heldout', cause: e });
  }
  const parsed = z.looseObject({ lines: z.array(z.number().int()) }).safeParse(json);
  if (!parsed.success) {
    throw new ParamineError('BAD_FILE', `${file}: expected {"lines": [1-based line numbers]}`, {
      field: 'heldout',
    });
  }
  return new Set(parsed.data.lines);
}

/** The pairs at these 1-based file lines. */
export function pairsAtLines(pairs: readonly LabeledPair[], lines: ReadonlySet<number>): LabeledPair[] {
  return pairs.filter((p) => lines.has(Number(p.where.slice(p.where.lastIndexOf(':') + 1))));
}

/** Reads every pair of a pair file. Throws ParamineError('BAD_FILE') with file:line on the first bad record. */
export async function readPairs(path: string): Promise<LabeledPair[]> {
  const name = basename(path).toLowerCase().replace(/\.gz$/, '');
  if (name.endsWith('.tgt')) return readAligned(twinOf(path, '.tgt', '.src', true), path);
  const format = formatOf(path);
  switch (format) {
    case 'tsv':
    case 'csv':
      return readTable(path, format);
    case 'json':
    case 'jsonl':
      return readJson(path);
    case 'src':
      return readAligned(path, twinOf(path, '.src', '.tgt', false));
    default:
      throw new ParamineError(
        'BAD_FILE',
        `${path}: unknown pair file format; use .tsv, .csv, .json, .jsonl or .src with a .tgt twin (optionally .gz)`,
        { field: 'input' },
      );
  }
}

/** X.src(.gz) -> the existing X.tgt or X.tgt.gz (and the other way round). */
function twinOf(path: string, from: string, to: string, fromIsTgt: boolean): string {
  const gz = /\.gz$/i.test(path);
  const stem = path.slice(0, path.length - (gz ? 3 : 0) - from.length);
  for (const candidate of [stem + to, `${stem}${to}.gz`]) if (existsSync(candidate)) return candidate;
  const what = fromIsTgt ? 'source' : 'target';
  throw new ParamineError(
    'BAD_FILE',
    `${path}: no line-aligned ${what} file ${basename(stem + to)} beside it in ${dirname(path) || '.'}`,
    { field: 'input' },
  );
}

async function collectText(path: string): Promise<string> {
  const { stream } = await openText(path);
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk as Buffer);
  } catch (e) {
    throw readError(path, e);
  }
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
}

async function readLines(path: string): Promise<string[]> {
  const { stream } = await openText(path);
  const lines: string[] = [];
  try {
    const rl = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of rl) lines.push(lines.length === 0 ? line.replace(/^\uFEFF/, '') : line);
  } catch (e) {
    throw readError(path, e);
  }
  return lines;
}

async function readAligned(src: string, tgt: string): Promise<LabeledPair[]> {
  const [a, b] = await Promise.all([readLines(src), readLines(tgt)]);
  if (a.length !== b.length) {
    const [shortFile, n] = a.length < b.length ? [src, a.length] : [tgt, b.length];
    throw bad(
      `${shortFile}:${n + 1}`,
      `line counts differ: ${basename(src)} has ${a.length} lines, ${basename(tgt)} has ${b.length}`,
    );
  }
  const out: LabeledPair[] = [];
  for (const [i, s1] of a.entries()) {
    const s2 = b[i] ?? '';
    if (s1.trim() === '') throw bad(`${src}:${i + 1}`, 'empty sentence');
    if (s2.trim() === '') throw bad(`${tgt}:${i + 1}`, 'empty sentence');
    out.push({ s1, s2, where: `${src}:${i + 1}` });
  }
  return out;
}

async function readTable(path: string, format: 'tsv' | 'csv'): Promise<LabeledPair[]> {
  const { stream } = await openText(path);
  const parser = parse({
    delimiter: format === 'tsv' ? '\t' : ',',
    // MRPC-style TSV carries `"` as a plain character; CSV is RFC 4180 with some slack for stray quotes.
    quote: format === 'tsv' ? false : '"',
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    bom: true,
    info: true,
  });
  // pipe() does not forward the source's errors (a truncated gzip): hand them to the parser.
  stream.on('error', (e) => parser.destroy(e));
  stream.pipe(parser);
  const out: LabeledPair[] = [];
  let lastLine = 0;
  let cols: { s1: number; s2: number; label: number; width: number; names: string[] } | undefined;
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[];
      info: { lines: number };
    }>) {
      // info.lines is the record's last line; a quoted field spanning lines moves its start back.
      const line = info.lines - record.reduce((n, f) => n + (f.match(/\n/g)?.length ?? 0), 0);
      const where = `${path}:${line}`;
      lastLine = info.lines;
      if (!cols) {
        cols = headerColumns(where, record);
        continue;
      }
      if (record.length !== cols.width) {
        throw bad(where, `expected ${cols.width} columns as in the header, found ${record.length}`);
      }
      const s1 = record[cols.s1] ?? '';
      const s2 = record[cols.s2] ?? '';
      if (s1.trim() === '') throw bad(where, `empty text in column "${cols.names[cols.s1]}"`);
      if (s2.trim() === '') throw bad(where, `empty text in column "${cols.names[cols.s2]}"`);
      if (cols.label < 0) {
        out.push({ s1, s2, where });
        continue;
      }
      const label = record[cols.label] ?? '';
      if (label.trim() === '') throw bad(where, `empty label in column "${cols.names[cols.label]}"`);
      out.push({ s1, s2, label, where });
    }
  } catch (e) {
    const err = e as { code?: unknown; lines?: unknown; message?: string };
    if (err.code === 'CSV_QUOTE_NOT_CLOSED') {
      // csv-parse reports the last line; the quote was opened in the record after the last good one.
      throw bad(`${path}:${lastLine + 1}`, `unreadable CSV: a quote opened in this record is never closed`);
    }
    if (typeof err.code === 'string' && err.code.startsWith('CSV_') && typeof err.lines === 'number') {
      throw bad(`${path}:${err.lines}`, `unreadable ${format.toUpperCase()} (${err.message})`);
    }
    throw readError(path, e);
  } finally {
    stream.destroy();
  }
  if (!cols)
    throw bad(`${path}:1`, `empty file; expected a header naming two text columns (${expectedNames})`);
  return out;
}

function headerColumns(where: string, header: string[]) {
  const names = header.map((h) => h.trim());
  const lower = names.map((h) => h.toLowerCase());
  const seen = new Set<string>();
  for (const h of lower) {
    if (h !== '' && seen.has(h)) throw bad(where, `column "${h}" appears twice in the header`);
    seen.add(h);
  }
  const pair = findPair(where, (k) => lower.indexOf(k) >= 0, names, 'column');
  const label = LABEL_COLUMNS.map((k) => lower.indexOf(k)).find((i) => i >= 0) ?? -1;
  return { s1: lower.indexOf(pair[0]), s2: lower.indexOf(pair[1]), label, width: header.length, names };
}

/** The first TEXT_COLUMNS pair fully present; a half-present pair is a missing column, none an unknown header. */
function findPair(
  where: string,
  has: (key: string) => boolean,
  names: string[],
  what: 'column' | 'field',
): readonly [string, string] {
  const full = TEXT_COLUMNS.find(([a, b]) => has(a) && has(b));
  if (full) return full;
  const half = TEXT_COLUMNS.find(([a, b]) => has(a) || has(b));
  if (half) {
    const missing = has(half[0]) ? half[1] : half[0];
    throw bad(where, `missing ${what} "${missing}" (found ${listNames(names)})`);
  }
  const kind = what === 'column' ? 'header' : 'object';
  throw bad(
    where,
    `unknown ${kind}: no pair of text ${what}s (expected one of ${expectedNames}; found ${listNames(names)})`,
  );
}

const jsonRecord = z.record(z.string(), z.unknown());

/** Finds the line on which each top-level element of a JSON array starts (1-based). */
function arrayElementLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expectElement = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') line++;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') continue;
    if (expectElement && c !== ']') lines.push(line);
    expectElement = false;
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth++;
      if (depth === 1) expectElement = true;
    } else if (c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 1) expectElement = true;
  }
  return lines;
}

function lineAt(text: string, position: number): number {
  let n = 1;
  for (let i = 0; i < position && i < text.length; i++) if (text[i] === '\n') n++;
  return n;
}

async function readJson(path: string): Promise<LabeledPair[]> {
  const text = await collectText(path);
  const first = text.match(/\S/)?.[0];
  if (first === undefined)
    throw bad(`${path}:1`, 'empty file; expected a JSON array or JSON lines of objects');
  const records: Array<{ value: unknown; line: number }> = [];
  if (first === '[') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      const message = (e as Error).message;
      const pos = /position (\d+)/.exec(message)?.[1];
      const line =
        pos === undefined ? text.replace(/\s+$/, '').split('\n').length : lineAt(text, Number(pos));
      throw bad(`${path}:${line}`, `invalid JSON (${message})`);
    }
    const lines = arrayElementLines(text);
    for (const [i, value] of (parsed as unknown[]).entries()) records.push({ value, line: lines[i] ?? 1 });
  } else {
    for (const [i, raw] of text.split('\n').entries()) {
      if (raw.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (e) {
        throw bad(`${path}:${i + 1}`, `invalid JSON line (${(e as Error).message})`);
      }
      records.push({ value, line: i + 1 });
    }
  }
  const out: LabeledPair[] = [];
  let labelled: boolean | undefined;
  for (const { value, line } of records) {
    const where = `${path}:${line}`;
    const r = jsonRecord.safeParse(value);
    if (!r.success) throw bad(where, 'expected a JSON object');
    const obj = r.data;
    const keys = Object.keys(obj);
    // Case-insensitive lookup; an exact-case key wins over another spelling.
    const get = (k: string): unknown => {
      if (k in obj) return obj[k];
      const key = keys.find((x) => x.toLowerCase() === k);
      return key === undefined ? undefined : obj[key];
    };
    const has = (k: string) => get(k) !== undefined && get(k) !== null;
    const [k1, k2] = findPair(where, has, keys, 'field');
    const textOf = (k: string): string => {
      const v = get(k);
      if (typeof v !== 'string') throw bad(where, `field "${k}" is not a string`);
      if (v.trim() === '') throw bad(where, `empty text in field "${k}"`);
      return v;
    };
    const s1 = textOf(k1);
    const s2 = textOf(k2);
    const labelKey = LABEL_COLUMNS.find(has);
    const rawLabel = labelKey === undefined ? undefined : get(labelKey);
    if (labelled === undefined) labelled = rawLabel !== undefined;
    else if (labelled !== (rawLabel !== undefined)) {
      throw bad(
        where,
        labelled
          ? 'no label, while earlier records have one'
          : 'has a label, while earlier records have none',
      );
    }
    if (rawLabel === undefined) {
      out.push({ s1, s2, where });
      continue;
    }
    if (typeof rawLabel !== 'string' && typeof rawLabel !== 'number') {
      throw bad(where, `field "${labelKey}" must be a string or a number`);
    }
    const label = String(rawLabel);
    if (label.trim() === '') throw bad(where, `empty label in field "${labelKey}"`);
    out.push({ s1, s2, label, where });
  }
  return out;
}

/**
 * Documents in: a corpus whose records are documents, read as their sentences (docs/formats.md). A `.txt`
 * file holds documents separated by blank lines; a `.jsonl` line is one document (`text`, its id in `doc`
 * or `id`, an optional `lang`, any other metadata); an `.srt` file is one subtitle document whose cues keep
 * their times. Each sentence is a record with the metadata `doc` (the document's id as the input gave it),
 * `pos` (its 0-based position in the document), `start`/`end` (character offsets in the document text, or
 * in the cue for subtitles) and the document's own fields. Records are numbered by sentence within the
 * file, so a build resumes after the last sentence it stored.
 */
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import { openText } from './open.js';
import { type BadRecord, type CorpusRecord, parseTextLine } from './records.js';
import { splitSentences } from './split.js';

/** Subtitles are cut into documents of this many minutes by cue start (Turku's 15-minute segments). */
export const DEFAULT_SEGMENT_MINUTES = 15;

export interface DocumentOptions {
  /** BCP 47 language of the documents without a `lang` of their own (default en). */
  lang?: string | undefined;
  /** Minutes a subtitle document spans (default DEFAULT_SEGMENT_MINUTES; 0: the whole file). */
  segmentMinutes?: number | undefined;
  onBadRecord?: 'fail' | 'skip';
}

interface Doc {
  id: string;
  text: string;
  lang?: string | undefined;
  meta?: Record<string, unknown>;
  /** Subtitles: the cue each sentence came from, with its times. */
  cue?: { n: number; startMs: number; endMs: number };
  line: number;
}

const jsonDoc = z.looseObject({
  text: z.string(),
  doc: z.union([z.string(), z.number()]).optional(),
  id: z.union([z.string(), z.number()]).optional(),
  lang: z.string().min(2).max(35).optional(),
});

const stem = (path: string) =>
  basename(path)
    .replace(/\.gz$/i, '')
    .replace(/\.[^.]+$/, '');

/** The sentence records of one document file (`fileIndex` as in the input list). */
export async function* readDocuments(
  path: string,
  fileIndex: number,
  kind: 'txt' | 'jsonl' | 'srt',
  options: DocumentOptions = {},
): AsyncGenerator<CorpusRecord | BadRecord> {
  const { stream } = await openText(path);
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  const docs =
    kind === 'jsonl'
      ? jsonDocs(path, lines)
      : kind === 'srt'
        ? srtCues(path, lines, options.segmentMinutes ?? DEFAULT_SEGMENT_MINUTES)
        : textDocs(path, lines);
  let record = 0;
  const positions = new Map<string, number>();
  for await (const d of docs) {
    if ('error' in d) {
      record++;
      const error = new ParamineError('BAD_FILE', `${path}:${d.line}: ${d.error}`, {
        field: `${path}:${d.line}`,
      });
      if (options.onBadRecord !== 'skip') throw error;
      yield { fileIndex, record, where: `${path}:${d.line}`, error };
      continue;
    }
    for (const s of splitSentences(d.text, d.lang ?? options.lang ?? 'en')) {
      record++;
      const pos = positions.get(d.id) ?? 0;
      positions.set(d.id, pos + 1);
      const cue = d.cue ? { cue: d.cue.n, startMs: d.cue.startMs, endMs: d.cue.endMs } : {};
      yield {
        fileIndex,
        record,
        where: `${path}:${d.line}`,
        text: s.text,
        meta: { ...d.meta, doc: d.id, pos, start: s.start, end: s.end, ...cue },
      };
    }
  }
}

type Read = Doc | { error: string; line: number };

/** Documents separated by blank lines; ids FILE:N (N from 1). */
async function* textDocs(path: string, lines: AsyncIterable<string>): AsyncGenerator<Read> {
  let buf: string[] = [];
  let first = 0;
  let n = 0;
  let line = 0;
  const flush = (): Doc | undefined => {
    if (buf.length === 0) return undefined;
    n++;
    const d = { id: `${stem(path)}:${n}`, text: buf.join('\n'), line: first };
    buf = [];
    return d;
  };
  for await (const l of lines) {
    line++;
    if (l.trim() === '') {
      const d = flush();
      if (d) yield d;
      continue;
    }
    if (buf.length === 0) first = line;
    buf.push(l);
  }
  const d = flush();
  if (d) yield d;
}

/** One document a line: `text`, its id in `doc` or `id` (default FILE:LINE), `lang`, other metadata. */
async function* jsonDocs(path: string, lines: AsyncIterable<string>): AsyncGenerator<Read> {
  let line = 0;
  for await (const l of lines) {
    line++;
    if (l.trim() === '') continue;
    const r = parseTextLine(l, jsonDoc);
    if ('error' in r) {
      yield { error: r.error, line };
      continue;
    }
    const { text, doc, id, lang, ...meta } = r.value;
    yield { id: String(doc ?? id ?? `${stem(path)}:${line}`), text, lang, meta, line };
  }
}

const TIME = /^(\d+):(\d{2}):(\d{2})[,.](\d{1,3})\s*-->\s*(\d+):(\d{2}):(\d{2})[,.](\d{1,3})/;
const ms = (h: string, m: string, s: string, f: string) =>
  ((Number(h) * 60 + Number(m)) * 60 + Number(s)) * 1000 + Number(f.padEnd(3, '0'));

/**
 * SubRip cues (number, `start --> end`, text lines; blocks between blank lines). The file is cut by cue
 * start into segments of `minutes` (0: one document), each a document `FILE:N` (N from 1, by time) with the
 * metadata `subtitle` (FILE) and `segment` (N): two versions of one film pair segment by segment
 * (`docs align --same segment --differ subtitle`), as Turku aligned alternative subtitles.
 */
async function* srtCues(path: string, lines: AsyncIterable<string>, minutes: number): AsyncGenerator<Read> {
  const name = stem(path);
  const span = minutes * 60_000;
  let block: Array<{ text: string; line: number }> = [];
  let n = 0;
  let line = 0;
  function* cueOf(b: typeof block): Generator<Read> {
    // An optional cue number, then the times, then the text.
    const at = b.findIndex((x) => TIME.test(x.text));
    if (at < 0 || at > 1) {
      yield {
        error: 'a block without a cue time (HH:MM:SS,mmm --> HH:MM:SS,mmm) at its start',
        line: b[0]?.line ?? line,
      };
      return;
    }
    const t = TIME.exec((b[at] as { text: string }).text) as RegExpExecArray;
    const text = b
      .slice(at + 1)
      .map((x) => x.text)
      .join('\n')
      .replace(/<[^>]+>/g, '');
    if (text.trim() === '') return;
    n++;
    const [h1, m1, s1, f1, h2, m2, s2, f2] = t.slice(1) as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const startMs = ms(h1, m1, s1, f1);
    const segment = span > 0 ? Math.floor(startMs / span) + 1 : undefined;
    yield {
      id: segment === undefined ? name : `${name}:${segment}`,
      text,
      ...(segment === undefined ? {} : { meta: { subtitle: name, segment } }),
      cue: { n, startMs, endMs: ms(h2, m2, s2, f2) },
      line: (b[at] as { line: number }).line,
    };
  }
  for await (const raw of lines) {
    line++;
    const l = raw.replace(/^\uFEFF/, '');
    if (l.trim() !== '') {
      block.push({ text: l, line });
      continue;
    }
    if (block.length) yield* cueOf(block);
    block = [];
  }
  if (block.length) yield* cueOf(block);
}

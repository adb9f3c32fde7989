/**
 * The `embed` stage: one chunk of the input read, normalized and filtered exactly as the one-machine
 * build does (src/indexer/ingest.ts keepRecord), de-duplicated within the chunk (first occurrence kept),
 * embedded and published as three files: the kept rows (text, dedup key, metadata), their half-float
 * vectors, and their key hashes sorted and bucketed by first byte for the dedup stage.
 */
import { type BadRecord, type CorpusRecord, readSentenceRange, readSentences } from '../corpus/index.js';
import { ParamineError } from '../errors.js';
import { toHalf } from '../index/index.js';
import type { Embedder } from '../indexer/ingest.js';
import { keepRecord } from '../indexer/ingest.js';
import { type BuildOptions, buildOptionsSchema } from '../indexer/options.js';
import { type Counters, emptyCounters } from '../indexer/state.js';
import { keyHash } from '../store/index.js';
import { layout, publish, readMarker } from './layout.js';
import { chunkName, type QueueBuild } from './state.js';

/** One kept row of a chunk, as the assembly writes it to the store. */
export interface ChunkRow {
  t: string;
  k: string;
  m?: Record<string, unknown>;
}

export interface EmbedResult {
  rows: number;
  counters: Counters;
}

/** Key-hash file: 257 u32 bucket offsets (entries), then entries of 16 hash bytes + u32 row, sorted. */
export const KEY_HEADER = 257 * 4;
export const KEY_ENTRY = 20;

export function buildOptions(b: QueueBuild): BuildOptions {
  return buildOptionsSchema.parse(b.options);
}

function records(b: QueueBuild, c: number, options: BuildOptions): AsyncGenerator<CorpusRecord | BadRecord> {
  const onBad = options.onBadRecord;
  const spec = b.chunks[c];
  if (!spec) throw new ParamineError('BAD_INPUT', `${chunkName(b, c)} is not a chunk of build ${b.id}`);
  const path = (b.inputs[spec.fileIndex] as { path: string }).path;
  if ('whole' in spec) return readSentences([path], { onBadRecord: onBad, format: options.format });
  return readSentenceRange(path, spec.fileIndex, spec, onBad, options.format);
}

/** Reads a chunk: its kept rows (in-chunk duplicates dropped) and its counters. */
export async function readChunkRows(b: QueueBuild, c: number, options: BuildOptions) {
  const counters = emptyCounters();
  const rows: ChunkRow[] = [];
  const seen = new Set<string>();
  for await (const rec of records(b, c, options)) {
    counters.read++;
    if ('error' in rec) {
      counters.bad++;
      continue;
    }
    const kept = keepRecord(rec, options, counters);
    if (kept === undefined) continue;
    const { text, key } = kept;
    if (seen.has(key)) {
      counters.duplicates++;
      continue;
    }
    seen.add(key);
    rows.push(rec.meta === undefined ? { t: text, k: key } : { t: text, k: key, m: rec.meta });
    counters.kept++;
  }
  return { rows, counters };
}

/** The sorted, bucketed key-hash file of a chunk's rows. */
export function keyFile(rows: readonly ChunkRow[]): Buffer {
  const entries = rows.map((r, i) => ({ h: keyHash(r.k), i }));
  entries.sort((a, b) => Buffer.compare(a.h, b.h) || a.i - b.i);
  const out = Buffer.alloc(KEY_HEADER + entries.length * KEY_ENTRY);
  let bucket = 0;
  for (const [n, e] of entries.entries()) {
    const first = e.h[0] as number;
    while (bucket <= first) out.writeUInt32LE(n, 4 * bucket++);
    e.h.copy(out, KEY_HEADER + n * KEY_ENTRY);
    out.writeUInt32LE(e.i, KEY_HEADER + n * KEY_ENTRY + 16);
  }
  while (bucket <= 256) out.writeUInt32LE(entries.length, 4 * bucket++);
  return out;
}

/** Runs (or finds done) the embed job of chunk c. */
export async function runEmbed(
  work: string,
  b: QueueBuild,
  c: number,
  embedder: Embedder,
  onProgress?: (done: number, total: number) => Promise<void> | void,
): Promise<EmbedResult> {
  const base = layout.chunk(work, c);
  const done = readMarker(base);
  if (done) return done.info as unknown as EmbedResult;
  const options = buildOptions(b);
  let read: Awaited<ReturnType<typeof readChunkRows>>;
  try {
    read = await readChunkRows(b, c, options);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw new ParamineError('BAD_FILE', `${chunkName(b, c)}: ${message}`, { cause: e });
  }
  const { rows, counters } = read;
  const vectors = new Float32Array(rows.length * embedder.dim);
  for (let i = 0; i < rows.length; i += options.encodeBatch) {
    const part = rows.slice(i, i + options.encodeBatch).map((r) => r.t);
    vectors.set(await embedder.encode(part), i * embedder.dim);
    await onProgress?.(Math.min(i + options.encodeBatch, rows.length), rows.length);
  }
  const halves = toHalf(vectors);
  const info: EmbedResult = { rows: rows.length, counters };
  publish(
    base,
    {
      rows: Buffer.from(rows.map((r) => `${JSON.stringify(r)}\n`).join('')),
      f16: new Uint8Array(halves.buffer, halves.byteOffset, halves.byteLength),
      keys: keyFile(rows),
    },
    { ...info },
  );
  return info;
}

/**
 * Phase 1 of a build: read -> normalize -> filter -> dedup -> embed -> spill -> commit, one checkpoint
 * at a time. Reading the next checkpoint overlaps with embedding the current one, so the build runs at
 * the encoder's speed. Each checkpoint commits its sentences, dedup keys and the input cursor in one
 * LMDB transaction after its vectors are on disk: a kill at any point resumes at the last checkpoint
 * with exactly the same ids.
 */
import { type CorpusRecord, readSentences } from '../corpus/index.js';
import type { NewSentence, SentenceStore } from '../store/index.js';
import { dedupKey, normalize, tokenCount } from '../text/index.js';
import type { Position, ProvidedEmbeddings } from './embeddings.js';
import type { BuildOptions } from './options.js';
import { dropUncommitted, writeChunk } from './spill.js';
import { type BuildState, STATE_KEY } from './state.js';

export interface Embedder {
  readonly dim: number;
  encode(texts: string[]): Promise<Float32Array>;
}

interface Chunk {
  rows: NewSentence[];
  /** Where each row came from (file, record): its row in --embeddings. */
  positions: Position[];
  /** Input position and counters as of the chunk's last record. */
  cursor: BuildState['cursor'];
  counters: BuildState['counters'];
}

export interface IngestHooks {
  /** Called after each committed checkpoint. */
  onCheckpoint?: (state: BuildState, bytesRead: number) => void;
  /** Called for records skipped as bad (with --on-bad-record skip). */
  onBadRecord?: (where: string, message: string) => void;
  /** Vectors computed elsewhere (--embeddings): read instead of encoded, a sample re-encoded as a check. */
  provided?: ProvidedEmbeddings;
}

export async function ingest(
  state: BuildState,
  store: SentenceStore,
  embedder: Embedder,
  workDir: string,
  options: BuildOptions,
  hooks: IngestHooks = {},
): Promise<BuildState> {
  dropUncommitted(workDir, state.chunks);
  const stats = { bytesRead: 0 };
  // Dedup keys read but not yet committed: LMDB answers only for committed checkpoints.
  const pending = new Set<string>();
  const chunks = readChunks(state, store, pending, options, stats, hooks);
  let current = state;
  let next = await chunks.next();
  while (!next.done) {
    const chunk = next.value;
    const started = Date.now();
    const vectors = hooks.provided
      ? fromProvided(hooks.provided, embedder, chunk, options, current.chunks)
      : embed(embedder, chunk.rows, options.encodeBatch);
    // Read and prepare the following checkpoint while this one is being embedded.
    const following = chunks.next();
    const [vecs, upcoming] = await Promise.all([vectors, following]);
    if (chunk.rows.length > 0) writeChunk(workDir, current.chunks, vecs);
    current = {
      ...current,
      cursor: chunk.cursor,
      nextId: current.nextId + chunk.rows.length,
      chunks: current.chunks + (chunk.rows.length > 0 ? 1 : 0),
      counters: chunk.counters,
      elapsedMs: current.elapsedMs + (Date.now() - started),
    };
    await store.commit(chunk.rows, { [STATE_KEY]: current });
    for (const r of chunk.rows) pending.delete(r.key);
    hooks.onCheckpoint?.(current, stats.bytesRead);
    next = upcoming;
  }
  return current;
}

async function embed(embedder: Embedder, rows: readonly NewSentence[], batch: number): Promise<Float32Array> {
  const out = new Float32Array(rows.length * embedder.dim);
  for (let i = 0; i < rows.length; i += batch) {
    const part = rows.slice(i, i + batch).map((r) => r.text);
    out.set(await embedder.encode(part), i * embedder.dim);
  }
  return out;
}

async function fromProvided(
  provided: ProvidedEmbeddings,
  embedder: Embedder,
  chunk: Chunk,
  options: BuildOptions,
  n: number,
): Promise<Float32Array> {
  const vectors = await provided.vectors(chunk.positions, embedder.dim);
  // More checks in the first checkpoint, so a misaligned input fails within seconds.
  const count = n === 0 ? 4 * options.embeddingsCheck : options.embeddingsCheck;
  const texts = chunk.rows.map((r) => r.text);
  await provided.check(texts, chunk.positions, vectors, embedder, count, options.seed + n);
  return vectors;
}

/** Groups kept sentences into checkpoints of options.checkpointEvery; the last one may be smaller. */
async function* readChunks(
  state: BuildState,
  store: SentenceStore,
  pending: Set<string>,
  options: BuildOptions,
  stats: { bytesRead: number },
  hooks: IngestHooks,
): AsyncGenerator<Chunk> {
  const counters = { ...state.counters };
  let nextId = state.nextId;
  let rows: NewSentence[] = [];
  let positions: Position[] = [];
  let cursor = state.cursor;
  // Each finished file's record count must equal its --embeddings rows.
  const fileEnd = (fileIndex: number, records: number) =>
    hooks.provided?.checkRecordCount(fileIndex, records);
  const fresh = state.cursor.fileIndex === 0 && state.cursor.record === 0;
  const reader = readSentences(options.inputs, {
    ...(fresh ? {} : { after: state.cursor }),
    onBadRecord: options.onBadRecord,
    format: options.format,
    documents: options.documents,
    lang: options.lang,
    segmentMinutes: options.segmentMinutes,
    stats,
  });
  let unsaved = false;
  for await (const rec of reader) {
    unsaved = true;
    counters.read++;
    for (let f = cursor.fileIndex; f < rec.fileIndex; f++)
      fileEnd(f, f === cursor.fileIndex ? cursor.record : 0);
    cursor = { fileIndex: rec.fileIndex, record: rec.record };
    if ('error' in rec) {
      counters.bad++;
      hooks.onBadRecord?.(rec.where, rec.error.message);
      continue;
    }
    const kept = keepRecord(rec, options, counters);
    if (kept === undefined) continue;
    const { text, key } = kept;
    if (pending.has(key) || store.idForKey(key) !== undefined) {
      counters.duplicates++;
      continue;
    }
    pending.add(key);
    const id = nextId++;
    rows.push(rec.meta === undefined ? { id, text, key } : { id, text, key, meta: rec.meta });
    positions.push({ fileIndex: rec.fileIndex, record: rec.record });
    counters.kept++;
    if (rows.length === options.checkpointEvery) {
      yield { rows, positions, cursor, counters: { ...counters } };
      rows = [];
      positions = [];
      unsaved = false;
    }
  }
  for (let f = cursor.fileIndex; f < options.inputs.length; f++)
    fileEnd(f, f === cursor.fileIndex ? cursor.record : 0);
  // A tail of filtered or duplicate lines still moves the cursor and the counters.
  if (unsaved) yield { rows, positions, cursor, counters: { ...counters } };
}

/** A record's normalized text and dedup key, or undefined when a filter drops it (counted by reason). */
export function keepRecord(
  rec: CorpusRecord,
  options: BuildOptions,
  counters: BuildState['counters'],
): { text: string; key: string } | undefined {
  if (rec.text.length > options.maxChars) {
    counters.long++;
    return undefined;
  }
  const text = normalize(rec.text);
  if (text === '') {
    counters.empty++;
    return undefined;
  }
  const n = tokenCount(text);
  if (n < options.minTokens) {
    counters.short++;
    return undefined;
  }
  if (n > options.maxTokens) {
    counters.long++;
    return undefined;
  }
  const key = dedupKey(text);
  if (key === '') {
    // Punctuation or symbols only: nothing to embed or to match.
    counters.empty++;
    return undefined;
  }
  return { text, key };
}

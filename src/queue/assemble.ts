/**
 * The coordinator's assembly, after dedup: every chunk in input order, its dropped rows left out, its
 * kept rows committed to the LMDB store with dense ids (one transaction a chunk, with the assembly's
 * cursor) and their vectors written at their ids' place in DIR/vectors.f16. A killed coordinator resumes
 * at the last committed chunk (the vector file is cut back to the committed ids). The ids, texts and
 * vectors are those of the one-machine build: same order, same first occurrences kept.
 */
import { closeSync, fsyncSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import { type Counters, emptyCounters } from '../indexer/state.js';
import { type NewSentence, SentenceStore, STORE_DIR } from '../store/index.js';
import type { ChunkRow, EmbedResult } from './embed.js';
import { layout, readChecked, readMarker } from './layout.js';
import { chunkName, type QueueBuild } from './state.js';

const CURSOR_KEY = 'queue-assemble';
const cursorSchema = z.object({ build: z.string(), chunk: z.number().int(), nextId: z.number().int() });

export interface Assembled {
  vectors: number;
  counters: Counters;
}

/** The corpus counters of the whole build: the chunks' own, with the cross-chunk duplicates moved out of kept. */
export function totalCounters(work: string, b: QueueBuild, drops: number): Counters {
  const total = emptyCounters();
  const skipped = new Set(b.skipped);
  for (let c = 0; c < b.chunks.length; c++) {
    if (skipped.has(c)) continue;
    const m = readMarker(layout.chunk(work, c));
    if (!m) throw new ParamineError('CONFLICT', `${chunkName(b, c)} has no published output`);
    const counters = (m.info as unknown as EmbedResult).counters;
    for (const k of Object.keys(total) as (keyof Counters)[]) total[k] += counters[k];
  }
  total.kept -= drops;
  total.duplicates += drops;
  return total;
}

function chunkRows(base: string, rows: Buffer, count: number, name: string): ChunkRow[] {
  const lines = rows.toString('utf8').split('\n');
  lines.pop();
  if (lines.length !== count) {
    throw new ParamineError(
      'BAD_FILE',
      `${base}.rows: ${lines.length} rows, its marker says ${count} (${name})`,
    );
  }
  return lines.map((l) => JSON.parse(l) as ChunkRow);
}

export async function assemble(
  work: string,
  out: string,
  b: QueueBuild,
  drops: Map<number, number[]>,
  onChunk?: (done: number, total: number) => void,
): Promise<Assembled> {
  const dim = b.model.dim;
  const rowBytes = dim * 2;
  const store = SentenceStore.open(join(out, STORE_DIR));
  const fd = openSync(layout.vectors(work), 'a+');
  try {
    const saved = cursorSchema.safeParse(store.getState(CURSOR_KEY));
    let { chunk, nextId } = saved.success && saved.data.build === b.id ? saved.data : { chunk: 0, nextId: 0 };
    if (!saved.success && store.count > 0) {
      throw new ParamineError(
        'CONFLICT',
        `${out}/store holds sentences of another build; remove it or choose another --out`,
      );
    }
    ftruncateSync(fd, nextId * rowBytes);
    const skipped = new Set(b.skipped);
    const wfd = openSync(layout.vectors(work), 'r+');
    try {
      for (; chunk < b.chunks.length; chunk++) {
        const kept = skipped.has(chunk)
          ? []
          : assembleChunk(work, b, chunk, drops.get(chunk) ?? [], { fd: wfd, nextId });
        nextId += kept.length;
        // The rows and the cursor past them in one transaction (their vectors are already durable).
        await store.commit(kept, { [CURSOR_KEY]: { build: b.id, chunk: chunk + 1, nextId } });
        onChunk?.(chunk + 1, b.chunks.length);
      }
    } finally {
      closeSync(wfd);
    }
    let totalDrops = 0;
    for (const list of drops.values()) totalDrops += list.length;
    return { vectors: nextId, counters: totalCounters(work, b, totalDrops) };
  } finally {
    closeSync(fd);
    await store.close();
  }
}

/** Writes chunk c's kept vectors at their ids' place; returns its kept rows with their ids. */
function assembleChunk(
  work: string,
  b: QueueBuild,
  c: number,
  dropped: readonly number[],
  at: { fd: number; nextId: number },
): NewSentence[] {
  const rowBytes = b.model.dim * 2;
  const base = layout.chunk(work, c);
  const marker = readMarker(base);
  if (!marker) throw new ParamineError('CONFLICT', `${chunkName(b, c)} has no published output`);
  const info = marker.info as unknown as EmbedResult;
  const rows = chunkRows(base, readChecked(base, 'rows', marker), info.rows, chunkName(b, c));
  const f16 = readChecked(base, 'f16', marker);
  if (f16.byteLength !== rows.length * rowBytes) {
    throw new ParamineError('BAD_FILE', `${base}.f16 holds ${f16.byteLength} bytes for ${rows.length} rows`);
  }
  const kept: NewSentence[] = [];
  const vectors = Buffer.alloc((rows.length - dropped.length) * rowBytes);
  let d = 0;
  let id = at.nextId;
  for (const [i, r] of rows.entries()) {
    if (dropped[d] === i) {
      d++;
      continue;
    }
    f16.copy(vectors, (id - at.nextId) * rowBytes, i * rowBytes, (i + 1) * rowBytes);
    kept.push(r.m === undefined ? { id, text: r.t, key: r.k } : { id, text: r.t, key: r.k, meta: r.m });
    id++;
  }
  let off = 0;
  while (off < vectors.length)
    off += writeSync(at.fd, vectors, off, vectors.length - off, at.nextId * rowBytes + off);
  fsyncSync(at.fd);
  return kept;
}

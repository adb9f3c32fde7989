/**
 * The `fill` stage: one piece (a contiguous id range of one shard) added to a clone of the trained empty
 * index read from DIR/trained.faiss, its vectors read from the assembled DIR/vectors.f16, written to
 * DIR/pieces/s-SSS-p-PPPP.faiss. The same range gives the same piece, so a retried job changes nothing.
 */
import { existsSync } from 'node:fs';
import { ParamineError } from '../errors.js';
import { fillPiece, setNumThreads, VectorFile, writeIndexFile } from '../index/index.js';
import { type FaissIndex, readIndex } from '../native/index.js';
import { describe, layout, readMarker, writeMarker } from './layout.js';
import type { QueueBuild } from './state.js';

export interface FillJob {
  shard: number;
  piece: number;
  first: number;
  count: number;
}

/** The trained index of a work dir, read once per worker process (keyed by build id). */
const templates = new Map<string, Promise<FaissIndex>>();

function template(work: string, b: QueueBuild): Promise<FaissIndex> {
  const key = `${b.id}:${work}`;
  let t = templates.get(key);
  if (!t) {
    const path = layout.trained(work);
    if (!existsSync(path))
      throw new ParamineError('CONFLICT', `${path} is missing: the build is not trained yet`);
    t = readIndex(path);
    t.catch(() => templates.delete(key));
    templates.set(key, t);
  }
  return t;
}

export async function closeTemplates(): Promise<void> {
  const all = [...templates.values()];
  templates.clear();
  for (const t of all) await (await t.catch(() => undefined))?.close();
}

export async function runFill(
  work: string,
  b: QueueBuild,
  job: FillJob,
  threads: number,
  onProgress?: (added: number) => void,
): Promise<{ count: number }> {
  const base = layout.piece(work, job.shard, job.piece);
  const done = readMarker(base);
  if (done) return { count: job.count };
  if (b.vectors === undefined) throw new ParamineError('CONFLICT', `build ${b.id} is not assembled yet`);
  setNumThreads(threads);
  const source = await VectorFile.openFile(layout.vectors(work), b.vectors, b.model.dim);
  try {
    const piece = await fillPiece({
      template: await template(work, b),
      source,
      first: job.first,
      count: job.count,
      ...(onProgress ? { onProgress } : {}),
    });
    try {
      await writeIndexFile(piece, `${base}.faiss`);
    } finally {
      await piece.close();
    }
    writeMarker(base, { files: { faiss: describe(`${base}.faiss`) }, info: { ...job } });
    return { count: job.count };
  } finally {
    await source.close();
  }
}

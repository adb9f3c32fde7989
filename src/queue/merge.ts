/**
 * The coordinator's last phase: each shard's pieces (validated against their markers) merged into the
 * shard file, the assembled vectors moved into the index directory, the manifest written last, exactly
 * as the one-machine build's finish step writes it.
 */
import { copyFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceFile } from '../durable.js';
import { ParamineError } from '../errors.js';
import { mergePieces, shardFileName, VECTORS_FILE, writeIndexFile } from '../index/index.js';
import { contentOptions } from '../indexer/build.js';
import type { BuildOptions } from '../indexer/options.js';
import { buildPlan, finish } from '../indexer/shards.js';
import type { BuildState } from '../indexer/state.js';
import { readIndex } from '../native/index.js';
import { layout, readMarker } from './layout.js';
import type { QueueBuild } from './state.js';

export async function mergeShards(work: string, b: QueueBuild, options: BuildOptions): Promise<void> {
  const n = b.vectors ?? 0;
  const dim = b.model.dim;
  const plan = buildPlan(options, n, dim);
  const shards = b.shards ?? 1;
  const template = await readIndex(layout.trained(work));
  try {
    for (let s = 0; s < shards; s++) {
      const pieces = (b.pieces ?? []).filter((p) => p.shard === s).sort((x, y) => x.piece - y.piece);
      for (const p of pieces) {
        if (!readMarker(layout.piece(work, s, p.piece), true)) {
          throw new ParamineError(
            'CONFLICT',
            `shard ${s} piece ${p.piece} has no valid output (marker or checksum)`,
          );
        }
      }
      const shard = await mergePieces(
        template,
        pieces.map((p) => `${layout.piece(work, s, p.piece)}.faiss`),
      );
      try {
        const expected = pieces.reduce((a, p) => a + p.count, 0);
        if (shard.ntotal !== expected) {
          throw new ParamineError(
            'INTERNAL',
            `shard ${s} holds ${shard.ntotal} vectors after the merge, not ${expected}`,
          );
        }
        await writeIndexFile(shard, join(b.out, shardFileName(s)));
      } finally {
        await shard.close();
      }
    }
  } finally {
    await template.close();
  }
  // finish() renames the assembled file into the index: bring it onto the index's filesystem first.
  const assembled = join(b.out, `${VECTORS_FILE}.assembled`);
  await rename(layout.vectors(work), assembled).catch(async (e: NodeJS.ErrnoException) => {
    // Another file system: copied in full and fsynced under a temporary name, then renamed (durable.ts).
    if (e.code === 'EXDEV') await replaceFile(assembled, (tmp) => copyFile(layout.vectors(work), tmp));
    else if (e.code !== 'ENOENT') throw e;
  });
  const state: BuildState = {
    formatVersion: 1,
    phase: 'done',
    inputs: b.inputs,
    model: b.model,
    contentOptions: contentOptions(options),
    cursor: { fileIndex: b.inputs.length, record: 0 },
    nextId: n,
    chunks: b.chunks.length,
    counters: b.counters ?? { read: 0, kept: 0, duplicates: 0, empty: 0, short: 0, long: 0, bad: 0 },
    elapsedMs: b.elapsedMs,
  };
  await finish(
    {
      out: b.out,
      workDir: work,
      state,
      options,
      model: { id: b.model.id, sha256: b.model.sha256 },
      saveState: async () => {},
    },
    plan,
    n,
    dim,
    shards,
    assembled,
    { assembled: true, trainMs: b.trainMs, fillMs: b.fillMs, done: [], trained: plan.factory },
  );
}

/**
 * An index directory from vectors in memory, built the way `paramine index` builds one (a plan, training
 * on a seeded sample of vectors.f16, one shard filled from it, the manifest last), without the encoder and
 * the sentence store: for tests and benchmarks of the index alone.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type IndexPlan,
  type Manifest,
  sampleIds,
  shardFileName,
  toHalf,
  VECTORS_FILE,
  VectorFile,
  writeIndexManifest,
  writeOneShard,
} from '../index/index.js';

/** A stand-in model reference: these indexes are never queried with text. */
export const VECTORS_ONLY_MODEL = { id: 'vectors-only', sha256: '0'.repeat(64) };

export async function writeVectorIndex(
  dir: string,
  vectors: Float32Array,
  plan: IndexPlan,
  options: { seed?: number; threads?: number } = {},
): Promise<Manifest> {
  const { dim } = plan;
  const n = vectors.length / dim;
  await mkdir(dir, { recursive: true });
  const half = toHalf(vectors);
  await writeFile(join(dir, VECTORS_FILE), new Uint8Array(half.buffer, half.byteOffset, half.byteLength));
  const source = await VectorFile.openFile(join(dir, VECTORS_FILE), n, dim);
  try {
    const seed = options.seed ?? 1234;
    await writeOneShard(join(dir, shardFileName(0)), plan, source, sampleIds(n, plan.trainSize, seed), {
      ...options,
      seed,
    });
  } finally {
    await source.close();
  }
  return writeIndexManifest(
    dir,
    {
      factory: plan.factory,
      dim,
      metric: plan.metric,
      nlist: plan.nlist > 0 ? plan.nlist : null,
      shards: [{ file: shardFileName(0), count: n }],
    },
    {
      model: VECTORS_ONLY_MODEL,
      vectors: { file: VECTORS_FILE, dtype: 'float16', count: n, dim },
      search: plan.kind === 'flat' ? {} : plan.search,
      build: { plan, trainSize: plan.trainSize },
    },
  );
}

/** manifest.json of an index directory: what was built, with which model, in which shard files. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../durable.js';
import { ParamineError } from '../errors.js';

export const MANIFEST_FILE = 'manifest.json';
export const MANIFEST_FORMAT = 'paramine-index';
export const MANIFEST_VERSION = 1;

/** shard-000.faiss, shard-001.faiss, ... (a pattern, so a manifest cannot point outside its directory). */
export function shardFileName(i: number): string {
  return `shard-${String(i).padStart(3, '0')}.faiss`;
}

/** The kept embeddings (see vectors.ts): one fixed name, so a manifest cannot point outside its directory. */
export const VECTORS_FILE = 'vectors.f16';

/**
 * A measured search setting (tune.ts): recall@k against exact search on held-out queries of the
 * collection, and single-query latency. The manifest keeps the Pareto front (no point is both slower
 * and less accurate than another), cheapest first.
 */
export const OperatingPointSchema = z.object({
  nprobe: z.number().int().positive(),
  efSearch: z.number().int().positive().optional(),
  kFactor: z.number().min(1),
  recall: z.number().min(0).max(1),
  /** Standard error of `recall` (over queries): picking allows for it, so a new sample reaches it too. */
  recallStderr: z.number().min(0).optional(),
  p50Ms: z.number().nonnegative(),
  p99Ms: z.number().nonnegative(),
});
export type OperatingPoint = z.infer<typeof OperatingPointSchema>;

/** How the operating points were measured. */
export const TuningSchema = z.object({
  k: z.number().int().positive(),
  queries: z.number().int().positive(),
  latencyQueries: z.number().int().positive(),
  targetRecall: z.number().min(0).max(1),
  /** Whether some point reached the target (else the defaults are the cheapest point as accurate as the best, within its error). */
  reached: z.boolean(),
  seed: z.number().int(),
  settings: z.number().int().nonnegative(),
  threads: z.number().int().positive().optional(),
  ms: z.number().nonnegative(),
  measuredAt: z.iso.datetime(),
});
export type Tuning = z.infer<typeof TuningSchema>;

/** One-sided 95% (normal quantile): a point "reaches" r when recall - Z * stderr >= r. */
export const RECALL_Z = 1.645;

/** Lower 95% bound of a point's recall: what a new sample of queries can expect at least. */
export function recallBound(p: OperatingPoint): number {
  return p.recall - RECALL_Z * (p.recallStderr ?? 0);
}

/**
 * The cheapest point whose recall reaches `recall` with 95% confidence (recallBound). When none does, the
 * cheapest whose recall the sample cannot tell from the most accurate one's (at or above its bound): on
 * crowded data the top of the front can cost twice the time for a recall within its own error.
 */
export function pickOperatingPoint(
  points: readonly OperatingPoint[],
  recall: number,
): OperatingPoint | undefined {
  const reaching = points.filter((p) => recallBound(p) >= recall);
  const top = points.reduce<OperatingPoint | undefined>(
    (b, p) => (b === undefined || p.recall > b.recall ? p : b),
    undefined,
  );
  const candidates =
    reaching.length > 0 ? reaching : points.filter((p) => top && p.recall >= recallBound(top));
  let best: OperatingPoint | undefined;
  for (const p of candidates) {
    if (best === undefined || p.p50Ms < best.p50Ms || (p.p50Ms === best.p50Ms && p.recall > best.recall))
      best = p;
  }
  return best;
}

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex sha256');
/** A file's size, sha256, and the sha256 of evenly spaced blocks of it (cheap to check at 10^9 scale). */
const FileChecks = {
  sha256: Sha256.optional(),
  bytes: z.number().int().nonnegative().optional(),
  sampleSha256: Sha256.optional(),
};

export const ManifestSchema = z.object({
  format: z.literal(MANIFEST_FORMAT),
  version: z.literal(MANIFEST_VERSION),
  dim: z.number().int().positive(),
  metric: z.enum(['ip', 'l2']),
  factory: z.string().min(1),
  model: z.object({ id: z.string().min(1), sha256: Sha256 }),
  /** The id space: the next sentence's id (every shard's vectors, plus `removed`). */
  ntotal: z.number().int().nonnegative(),
  /** Ids no shard holds any more: deleted sentences a rebuild applied for good (absent: none). */
  removed: z.number().int().nonnegative().optional(),
  shards: z
    .array(
      z.object({
        file: z.string().regex(/^shard-\d{3,}\.faiss$/),
        count: z.number().int().nonnegative(),
        /** Checksums (indexes written before them have none): checked at open, see checksums.ts. */
        ...FileChecks,
      }),
    )
    .min(1),
  /**
   * Defaults for queries that do not say: nprobe (IVF lists visited), kFactor (refine candidates per hit),
   * efSearch (HNSW coarse quantizer's candidate list), refine 'vectors' (re-score k * kFactor candidates
   * with the exact vectors of vectors.f16; absent: the factory's own refine stage, if any).
   */
  search: z.object({
    nprobe: z.number().int().positive(),
    kFactor: z.number().min(1),
    efSearch: z.number().int().positive().optional(),
    refine: z.literal('vectors').optional(),
  }),
  /** Measured search settings, cheapest first (`paramine tune`; absent before it ran). */
  operatingPoints: z.array(OperatingPointSchema).optional(),
  tuning: TuningSchema.optional(),
  /** How it was built: the factory plan, training sample size, anything the indexer records. */
  build: z.record(z.string(), z.unknown()),
  /** Every vector as IEEE half floats, row i = id i (absent in indexes built without them, or before). */
  vectors: z
    .object({
      file: z.literal(VECTORS_FILE),
      dtype: z.literal('float16'),
      count: z.number().int().nonnegative(),
      dim: z.number().int().positive(),
      ...FileChecks,
    })
    .optional(),
  faissVersion: z.string(),
  createdAt: z.iso.datetime(),
});

export type Manifest = z.infer<typeof ManifestSchema>;

export async function readManifest(dir: string): Promise<Manifest> {
  const path = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new ParamineError('FILE_NOT_FOUND', `no index at ${dir} (${MANIFEST_FILE} missing)`);
    throw new ParamineError('BAD_FILE', `${path}: ${(e as Error).message}`, { cause: e });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ParamineError('BAD_FILE', `${path}: not JSON`, { field: MANIFEST_FILE, cause: e });
  }
  const parsed = ManifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? issue.path.join('.') : '';
    throw new ParamineError(
      'BAD_FILE',
      `${path}: ${where ? `${where}: ` : ''}${issue?.message ?? 'invalid'}`,
      {
        field: `${MANIFEST_FILE}${where ? `:${where}` : ''}`,
      },
    );
  }
  const m = parsed.data;
  const sum = m.shards.reduce((s, x) => s + x.count, 0) + (m.removed ?? 0);
  if (sum !== m.ntotal) {
    throw new ParamineError(
      'BAD_FILE',
      `${path}: shard counts and removed ids add up to ${sum}, not ${m.ntotal}`,
    );
  }
  if (new Set(m.shards.map((s) => s.file)).size !== m.shards.length) {
    throw new ParamineError('BAD_FILE', `${path}: a shard file is listed twice`);
  }
  if (m.search.refine === 'vectors' && !m.vectors) {
    throw new ParamineError('BAD_FILE', `${path}: search.refine is 'vectors' but no vectors file is listed`, {
      field: `${MANIFEST_FILE}:search.refine`,
    });
  }
  if (m.vectors && (m.vectors.count !== m.ntotal || m.vectors.dim !== m.dim)) {
    throw new ParamineError(
      'BAD_FILE',
      `${path}: vectors are ${m.vectors.count} x ${m.vectors.dim}, the index ${m.ntotal} x ${m.dim}`,
      { field: `${MANIFEST_FILE}:vectors` },
    );
  }
  return m;
}

/** Written last and atomically (durable.ts): a directory with a manifest is a complete index. */
export async function writeManifest(dir: string, manifest: Manifest): Promise<void> {
  const checked = ManifestSchema.parse(manifest);
  const path = join(dir, MANIFEST_FILE);
  await writeFileAtomic(path, `${JSON.stringify(checked, null, 2)}\n`);
}

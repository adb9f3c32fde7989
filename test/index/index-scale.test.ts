/**
 * The scale code paths at small size: an HNSW coarse quantizer with per-query efSearch, two-level k-means
 * (IVF1024_HNSW32 on 50k vectors), pieces filled from one trained index and merged, the memory bound of
 * fillShards, and re-scoring from a memory-mapped vectors.f16.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  fillPiece,
  fillShards,
  fromHalf,
  mergePieces,
  ShardedIndex,
  sampleIds,
  splitRange,
  toHalf,
  trainIndex,
  VECTORS_FILE,
  type VectorSource,
  writeIndexFile,
  writeIndexManifest,
} from '../../src/index/index.js';
import { allocateLists } from '../../src/index/train.js';
import { createIndex, type FaissIndex, HalfVectors } from '../../src/native/index.js';
import { clusteredDataset, denseIds, recallAtK } from '../../src/testing/index.js';

const root = mkdtempSync(join(tmpdir(), 'paramine-scale-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));

const dim = 32;
const n = 50_000;
const nq = 200;
const k = 10;
const { corpus, queries } = clusteredDataset(n, nq, dim, { seed: 21 });
const source: VectorSource = {
  count: n,
  dim,
  read: async (first, count) => corpus.slice(first * dim, (first + count) * dim),
  readIds: async (ids) => {
    const out = new Float32Array(ids.length * dim);
    ids.forEach((id, i) => {
      out.set(corpus.subarray(id * dim, (id + 1) * dim), i * dim);
    });
    return out;
  },
};
const factory = 'IVF1024_HNSW32,PQ8np';
const plan = { factory, kind: 'ivf-pq' as const, nlist: 1024, training: 'two-level' as const };
const sample = sampleIds(n, 40 * 1024, 3);

let exact: BigInt64Array;
let twoLevel: FaissIndex;

t.before(async () => {
  const flat = createIndex('Flat', dim, 'ip');
  await flat.add(corpus, denseIds(n));
  exact = (await flat.search(queries, k)).ids;
  await flat.close();
  const stages = new Set<string>();
  twoLevel = await trainIndex({
    plan,
    dim,
    metric: 'ip',
    source,
    sampleIds: sample,
    onProgress: (p) => {
      stages.add(p.stage);
    },
  });
  if (!['level1', 'assign', 'groups', 'quantizer', 'codes'].every((s) => stages.has(s))) {
    throw new Error(`two-level training skipped stages: ${[...stages].join(',')}`);
  }
});
t.teardown(() => twoLevel.close());

async function recallOf(index: FaissIndex, params: { nprobe: number; efSearch?: number }): Promise<number> {
  return recallAtK(exact, (await index.search(queries, k, params)).ids, nq, k);
}

t.test('two-level k-means trains an HNSW-quantized IVF as well as one k-means run', async (t) => {
  t.ok(twoLevel.isTrained);
  t.equal(twoLevel.ntotal, 0, 'trained and empty: the template of every piece');
  t.match(twoLevel.structure, /IVFPQ\(nlist=1024,M=8,nbits=8,quantizer=HNSW32\)/);
  const one = await trainIndex({ plan, dim, metric: 'ip', source, sampleIds: sample, twoLevel: false });
  const [a, b] = await Promise.all([
    fillPiece({ template: twoLevel, source, first: 0, count: n }),
    fillPiece({ template: one, source, first: 0, count: n }),
  ]);
  const r2 = await recallOf(a, { nprobe: 16, efSearch: 64 });
  const r1 = await recallOf(b, { nprobe: 16, efSearch: 64 });
  t.ok(r2 >= r1 - 0.05, `two-level recall@10 ${r2.toFixed(3)} vs one-level ${r1.toFixed(3)}`);
  t.ok(r2 > 0.4, 'PQ8 codes on 32-d: a real index, not noise');
  await Promise.all([a.close(), b.close(), one.close()]);
});

t.test('per-query efSearch reaches the HNSW quantizer (and nprobe the lists)', async (t) => {
  const index = await fillPiece({ template: twoLevel, source, first: 0, count: n });
  const greedy = await recallOf(index, { nprobe: 1, efSearch: 1 });
  const wide = await recallOf(index, { nprobe: 1, efSearch: 256 });
  t.ok(wide > greedy, `nprobe 1: efSearch 256 finds the right list more often (${wide} > ${greedy})`);
  const more = await recallOf(index, { nprobe: 32, efSearch: 64 });
  t.ok(more > wide, `nprobe 32 > nprobe 1 (${more} > ${wide})`);
  await t.rejects(index.search(queries, k, { nprobe: 4, efSearch: 0 }), { code: 'BAD_INPUT' });
  await index.close();
});

t.test('pieces filled independently and merged equal one fill of the whole range', async (t) => {
  const whole = await fillPiece({ template: twoLevel, source, first: 0, count: n, batch: 7_000 });
  const paths: string[] = [];
  for (const [i, r] of splitRange(n, 3).entries()) {
    const piece = await fillPiece({ template: twoLevel, source, ...r, batch: 4_096 });
    t.equal(piece.ntotal, r.count);
    paths.push(join(root, `piece-${i}.faiss`));
    await writeIndexFile(piece, paths[i] as string);
    await piece.close();
  }
  const merged = await mergePieces(twoLevel, paths);
  t.equal(merged.ntotal, n);
  const [a, b] = await Promise.all([
    whole.search(queries, k, { nprobe: 8 }),
    merged.search(queries, k, { nprobe: 8 }),
  ]);
  t.same([...b.ids], [...a.ids], 'same ids');
  t.same([...b.distances], [...a.distances], 'same scores');
  await t.rejects(fillPiece({ template: merged, source, first: 0, count: 10 }), { code: 'BAD_INPUT' });
  await t.rejects(fillPiece({ template: twoLevel, source, first: n - 5, count: 10 }), { code: 'BAD_INPUT' });
  await Promise.all([whole.close(), merged.close()]);
});

t.test('fillShards holds at most `jobs` shards, each only its own range', async (t) => {
  const ranges = splitRange(n, 5);
  let peak = 0;
  const saved = new Map<number, number>();
  await fillShards({
    template: twoLevel,
    source,
    ranges,
    jobs: 2,
    skip: new Set([3]),
    batch: 5_000,
    onLive: (live) => {
      peak = Math.max(peak, live);
    },
    save: async (i, index) => {
      saved.set(i, index.ntotal);
    },
  });
  t.ok(peak <= 2, `at most 2 shards in memory (peak ${peak})`);
  t.equal(peak, 2, 'two were filled at once');
  t.same([...saved.keys()].sort(), [0, 1, 2, 4], 'the skipped shard (done before a resume) is not redone');
  for (const [i, count] of saved) t.equal(count, ranges[i]?.count, `shard ${i} holds its range only`);
});

t.test('allocateLists spreads nlist over groups by size', async (t) => {
  t.same(allocateLists([10, 30, 60], 10), [1, 3, 6]);
  t.same(
    allocateLists([0, 5, 1000], 8).reduce((a, b) => a + b, 0),
    8,
  );
  t.equal(allocateLists([0, 5, 1000], 8)[0], 0, 'no list for an empty group');
  t.ok(
    allocateLists([1, 1, 1000], 500).every((x, i) => x <= [1, 1, 1000][i]!),
    'never more lists than points',
  );
});

t.test('re-scoring from a memory-mapped vectors.f16: exact cosine, no RAM', async (t) => {
  const dir = join(root, 'refined');
  const piece = await fillPiece({ template: twoLevel, source, first: 0, count: n });
  mkdirSync(dir, { recursive: true });
  await writeIndexFile(piece, join(dir, 'shard-000.faiss'));
  await piece.close();
  writeFileSync(join(dir, VECTORS_FILE), toHalf(corpus));
  await writeIndexManifest(
    dir,
    { factory, dim, metric: 'ip', nlist: 1024, shards: [{ file: 'shard-000.faiss', count: n }] },
    {
      model: { id: 'm', sha256: 'ab'.repeat(32) },
      vectors: { file: VECTORS_FILE, dtype: 'float16', count: n, dim },
      search: { nprobe: 16, efSearch: 32, kFactor: 8, refine: 'vectors' },
    },
  );
  const index = await ShardedIndex.open(dir);
  t.equal(index.mmapped, false, 'a small index is read into memory');
  const refined = await index.search(queries, k);
  const plain = await index.search(queries, k, { refine: false });
  const rr = recallAtK(exact, refined.ids, nq, k);
  const rp = recallAtK(exact, plain.ids, nq, k);
  t.ok(rr > rp + 0.2, `re-scored recall@10 ${rr.toFixed(3)} vs PQ codes alone ${rp.toFixed(3)}`);
  // The score of a hit is its exact cosine with the half-float vector.
  const id = Number(refined.ids[0]);
  let dot = 0;
  const halves = toHalf(corpus.subarray(id * dim, (id + 1) * dim));
  const v = fromHalf(halves);
  for (let j = 0; j < dim; j++) dot += queries[j]! * v[j]!;
  t.ok(Math.abs(refined.distances[0]! - dot) < 1e-5, 'distance = cosine with the stored vector');
  await index.close();
  const mapped = await ShardedIndex.open(dir, { mmapAboveBytes: 1 });
  t.equal(mapped.mmapped, true, "above the threshold the inverted lists are memory-mapped ('auto')");
  t.same([...(await mapped.search(queries, k)).ids], [...refined.ids], 'same answers mapped');
  await mapped.close();

  const hv = await HalfVectors.open(join(dir, VECTORS_FILE), dim);
  t.equal(hv.count, n);
  await t.rejects(hv.rescore(queries.subarray(0, dim), BigInt64Array.from([BigInt(n)]), 1, 'ip'), {
    code: 'BAD_INPUT',
    message: /past the 50000 stored vectors/,
  });
  const none = await hv.rescore(queries.subarray(0, dim), BigInt64Array.from([-1n, 5n]), 2, 'ip');
  t.same([...none.ids], [5n, -1n], '-1 candidates are skipped, missing slots padded');
  await hv.close();
  await t.rejects(HalfVectors.open(join(dir, 'missing.f16'), dim), { code: 'FILE_NOT_FOUND' });
});

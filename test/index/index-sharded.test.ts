import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { chooseFactory } from '../../src/index/factory.js';
import { IndexBuilder, MANIFEST_FILE, readManifest, ShardedIndex } from '../../src/index/index.js';
import { createIndex, type Metric } from '../../src/native/index.js';
import { clusteredDataset, denseIds, recallAtK } from '../../src/testing/index.js';

const root = mkdtempSync(join(tmpdir(), 'paramine-sharded-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));

const dim = 64;
const n = 12_000;
const { corpus, queries } = clusteredDataset(n, 60, dim, { seed: 5 });
const ids = denseIds(n);
const model = { id: 'test-model', sha256: 'ab'.repeat(32) };
const otherModel = { id: 'other-model', sha256: 'cd'.repeat(32) };

/** Adds the corpus in shuffled-order batches (the builder spreads them over the shards). */
async function fill(builder: IndexBuilder, batch = 1_000): Promise<void> {
  const order = [...Array(n / batch).keys()].reverse();
  await Promise.all(
    order.map((b) =>
      builder.add(
        corpus.subarray(b * batch * dim, (b + 1) * batch * dim),
        ids.subarray(b * batch, (b + 1) * batch),
      ),
    ),
  );
}

for (const metric of ['ip', 'l2'] as const satisfies readonly Metric[]) {
  t.test(`four flat shards return exactly what one flat index returns (${metric})`, async (t) => {
    const dir = join(root, `flat-${metric}`);
    const sample = new Float32Array(0); // Flat needs no training
    const builder = await IndexBuilder.train({ dim, metric, factory: 'Flat', shards: 4, sample });
    await fill(builder);
    t.same(
      [0, 1, 2, 3].map((i) => builder.shardCounts[i]),
      [3000, 3000, 3000, 3000],
      'batches spread evenly',
    );
    await builder.write(dir, { model });
    await builder.close();

    const one = createIndex('Flat', dim, metric);
    await one.add(corpus, ids);
    const sharded = await ShardedIndex.open(dir, { model, dim });
    t.equal(sharded.shardCount, 4);
    t.equal(sharded.ntotal, n);
    for (const k of [1, 10, 100]) {
      // Batched (BLAS) and single-query (sequential) kernels both.
      for (const q of [queries, queries.subarray(0, dim)]) {
        const want = await one.search(q, k);
        const got = await sharded.search(q, k);
        const rows = q.length / dim;
        t.same(Array.from(got.ids), Array.from(want.ids), `k=${k}, ${rows} queries: ids`);
        if (rows === 1) {
          t.same(
            Array.from(got.distances),
            Array.from(want.distances),
            `k=${k}, 1 query: identical distances`,
          );
        } else {
          // Batches go through BLAS sgemm, whose edge blocks (and so the float summation order) depend on
          // how many vectors a shard holds: the same dot product can differ in the last bit or two.
          const worst = got.distances.reduce((m, d, i) => Math.max(m, Math.abs(d - want.distances[i]!)), 0);
          t.ok(
            worst <= 1e-6 * Math.max(1, Math.abs(want.distances[0]!)),
            `k=${k}, ${rows} queries: distances within float rounding (${worst})`,
          );
        }
      }
    }
    // Fewer vectors than k: the tail is padded with -1.
    const big = await sharded.search(queries.subarray(0, dim), 4096);
    t.equal(big.ids.filter((x) => x >= 0n).length, 4096);
    await Promise.all([one.close(), sharded.close()]);
  });
}

t.test('IVF-PQ shards share one trained quantizer; manifest records the build', async (t) => {
  const dir = join(root, 'ivf');
  const plan = chooseFactory({ n, dim, flatMax: 1000, refine: 'flat' });
  t.equal(plan.factory, 'IVF256,PQ8np,RFlat');
  const sample = corpus.subarray(0, plan.trainSize * dim);
  const builder = await IndexBuilder.train({ dim, metric: 'ip', factory: plan.factory, shards: 3, sample });
  await fill(builder);
  const manifest = await builder.write(dir, { model, build: { plan, corpus: 'synthetic' } });
  await builder.close();

  const onDisk = await readManifest(dir);
  t.same(onDisk, manifest, 'manifest on disk is what write returned');
  t.match(onDisk, {
    format: 'paramine-index',
    version: 1,
    dim,
    metric: 'ip',
    factory: 'IVF256,PQ8np,RFlat',
    model,
    ntotal: n,
    shards: [
      { file: 'shard-000.faiss', count: 4000 },
      { file: 'shard-001.faiss', count: 4000 },
      { file: 'shard-002.faiss', count: 4000 },
    ],
    search: { nprobe: 32, kFactor: 8 },
    build: { shards: 3, corpus: 'synthetic', plan: { nlist: 256, pqM: 8, trainSize: plan.trainSize } },
    faissVersion: '1.7.3',
  });
  t.ok(Date.now() - Date.parse(onDisk.createdAt) < 600_000, 'createdAt is now');

  const exact = createIndex('Flat', dim, 'ip');
  await exact.add(corpus, ids);
  const truth = await exact.search(queries, 10);
  await exact.close();
  for (const mmap of [false, true]) {
    const sharded = await ShardedIndex.open(dir, { model, mmap });
    const r = await sharded.search(queries, 10);
    const recall = recallAtK(truth.ids, r.ids, 60, 10);
    t.ok(recall >= 0.9, `mmap=${mmap}: recall@10 ${recall} with the manifest's defaults`);
    const low = recallAtK(
      truth.ids,
      (await sharded.search(queries, 10, { nprobe: 1, kFactor: 1 })).ids,
      60,
      10,
    );
    t.ok(low < recall, `per-call options override the defaults (${low} < ${recall})`);
    await sharded.close();
  }

  // Shards cloned from one trained index merge (FAISS compares the coarse centroids).
  const { readIndex } = await import('../../src/native/index.js');
  const [a, b] = await Promise.all([
    readIndex(join(dir, 'shard-000.faiss')),
    readIndex(join(dir, 'shard-001.faiss')),
  ]);
  await a.merge(b);
  t.equal(a.ntotal, 8000, 'shards merge: same quantizer and codebook');
  await Promise.all([a.close(), b.close()]);
});

t.test('open refuses a mismatched model or dimension and broken manifests', async (t) => {
  const dir = join(root, 'checks');
  const builder = await IndexBuilder.train({ dim, metric: 'l2', factory: 'Flat', shards: 2, sample: corpus });
  await fill(builder, 4_000);
  await builder.write(dir, { model });
  await t.rejects(builder.write(dir, { model }), { code: 'CONFLICT' }, 'no silent overwrite');
  await builder.write(dir, { model, overwrite: true });
  await builder.close();

  await t.rejects(ShardedIndex.open(dir, { model: otherModel }), {
    code: 'MODEL_MISMATCH',
    message: /test-model/,
  });
  const upper = await ShardedIndex.open(dir, { model: { sha256: model.sha256.toUpperCase() } });
  await upper.close(); // hex case does not matter
  await t.rejects(ShardedIndex.open(dir, { dim: 384 }), { code: 'DIM_MISMATCH', message: /64-d/ });
  const ok = await ShardedIndex.open(dir, { model: { sha256: model.sha256 }, dim });
  t.equal(ok.ntotal, n);
  await t.rejects(ok.search(queries.subarray(0, 10), 3), { code: 'BAD_INPUT' }, 'query of the wrong size');
  await ok.close();

  await t.rejects(ShardedIndex.open(join(root, 'nothing-here')), { code: 'FILE_NOT_FOUND' });
  const good = readFileSync(join(dir, MANIFEST_FILE), 'utf8');
  const broken = (edit: (m: Record<string, unknown>) => unknown) => {
    const m = JSON.parse(good) as Record<string, unknown>;
    writeFileSync(join(dir, MANIFEST_FILE), JSON.stringify(edit(m) ?? m));
  };
  writeFileSync(join(dir, MANIFEST_FILE), '{ not json');
  await t.rejects(ShardedIndex.open(dir), { code: 'BAD_FILE', message: /not JSON/ });
  broken((m) => {
    m.version = 99;
  });
  await t.rejects(ShardedIndex.open(dir), { code: 'BAD_FILE', message: /version/ });
  broken((m) => {
    m.shards = [{ file: '../../etc/passwd', count: n }];
  });
  await t.rejects(ShardedIndex.open(dir), { code: 'BAD_FILE', message: /shards/ });
  broken((m) => {
    m.dim = -4;
  });
  await t.rejects(ShardedIndex.open(dir), { code: 'BAD_FILE', message: /dim/ });
  broken((m) => {
    m.ntotal = n + 1;
  });
  await t.rejects(ShardedIndex.open(dir), { code: 'BAD_FILE', message: /add up/ });
  broken((m) => {
    m.shards = [
      { file: 'shard-000.faiss', count: 5_000 },
      { file: 'shard-001.faiss', count: 7_000 },
    ];
  });
  await t.rejects(ShardedIndex.open(dir), { code: 'BAD_FILE', message: /8000 vectors, manifest says 5000/ });
  broken((m) => {
    m.dim = 32;
  });
  await t.rejects(ShardedIndex.open(dir), { code: 'BAD_FILE', message: /64-d, manifest says 32-d/ });
  broken((m) => {
    m.shards = [
      { file: 'shard-000.faiss', count: 6_000 },
      { file: 'shard-007.faiss', count: 6_000 },
    ];
  });
  await t.rejects(ShardedIndex.open(dir), { code: 'FILE_NOT_FOUND' });
  writeFileSync(join(dir, MANIFEST_FILE), good);
  const again = await ShardedIndex.open(dir);
  t.equal(again.ntotal, n, 'the restored manifest opens');
  await again.close();
});

t.test('builder: ids must be dense and unique', async (t) => {
  const builder = await IndexBuilder.train({ dim, metric: 'ip', factory: 'Flat', shards: 2, sample: corpus });
  await builder.add(corpus.subarray(0, 10 * dim), denseIds(10));
  await t.rejects(builder.add(corpus.subarray(0, dim), denseIds(1, 3)), {
    code: 'BAD_INPUT',
    message: /already/,
  });
  const dup = new BigInt64Array([20n, 20n]);
  await t.rejects(builder.add(corpus.subarray(0, 2 * dim), dup), { code: 'BAD_INPUT', message: /already/ });
  await t.rejects(builder.add(corpus.subarray(0, dim), new BigInt64Array([-1n])), { code: 'BAD_INPUT' });
  await t.rejects(builder.add(corpus.subarray(0, 2 * dim), denseIds(1, 50)), { code: 'BAD_INPUT' });
  await t.rejects(builder.add(corpus.subarray(0, dim), denseIds(1, 50), { shard: 2 }), { code: 'BAD_INPUT' });
  const nan = corpus.slice(0, dim);
  nan[3] = Number.NaN;
  await t.rejects(builder.add(nan, denseIds(1, 10)), { code: 'BAD_INPUT', message: /NaN/ });
  await builder.add(corpus.subarray(0, dim), denseIds(1, 10)); // id 10 is free again after the failed batch
  await builder.add(corpus.subarray(0, dim), denseIds(1, 12));
  await t.rejects(builder.write(join(root, 'gappy'), { model }), { code: 'BAD_INPUT', message: /dense/ });
  await builder.add(corpus.subarray(0, dim), denseIds(1, 11));
  const manifest = await builder.write(join(root, 'dense'), { model });
  t.equal(manifest.ntotal, 13);
  await builder.close();
  await t.rejects(builder.add(corpus.subarray(0, dim), denseIds(1, 13)), { code: 'INDEX_CLOSED' });
  await t.rejects(IndexBuilder.train({ dim, metric: 'ip', factory: 'Flat', shards: 0, sample: corpus }), {
    code: 'BAD_INPUT',
  });
  await t.rejects(
    IndexBuilder.train({ dim, metric: 'ip', factory: 'IVF64,Flat', sample: corpus.subarray(0, 10 * dim) }),
    { code: 'BAD_INPUT', message: /training vectors/ },
  );
});

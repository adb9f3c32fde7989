import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ParamineError } from '../../src/errors.js';
import {
  createIndex,
  HalfVectors,
  kmeans,
  type Metric,
  mapFile,
  maxK,
  readIndex,
} from '../../src/native/index.js';
import { denseIds, gaussianVectors } from '../../src/testing/index.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-native-errors-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const dim = 16;
const data = gaussianVectors(2000, dim, 3);
const ids = denseIds(2000);
const query = data.subarray(0, dim);

/** Typed arrays of the wrong kind, seen by the addon as the untyped values JS callers may pass. */
function loose<T>(value: unknown): T {
  return value as T;
}

function withNaN(x: Float32Array, at: number, value = Number.NaN): Float32Array {
  const copy = x.slice();
  copy[at] = value;
  return copy;
}

async function trainedIvf(metric: Metric = 'ip') {
  const index = createIndex('IVF8,Flat', dim, metric);
  await index.train(data);
  await index.add(data, ids);
  return index;
}

t.test('createIndex rejects bad factory, dimension and metric', async (t) => {
  t.throws(() => createIndex('IVF8,PQ7', dim, 'ip'), { code: 'BAD_INPUT', message: /PQ7|multiple/ });
  t.throws(() => createIndex('NoSuchIndex', dim, 'ip'), { code: 'BAD_INPUT' });
  t.throws(() => createIndex('', dim, 'ip'), { code: 'BAD_INPUT' });
  t.throws(() => createIndex('Flat', 0, 'ip'), { code: 'BAD_INPUT' });
  t.throws(() => createIndex('Flat', 1.5, 'ip'), { code: 'BAD_INPUT' });
  t.throws(() => createIndex('Flat', dim, loose<Metric>('cosine')), { code: 'BAD_INPUT' });
  const e = t.throws(() => createIndex('Flat', -1, 'ip'));
  t.ok(e instanceof ParamineError && e.status === 400, 'a ParamineError with an HTTP status');
});

t.test('train: bad vectors, too few points, already trained, already filled', async (t) => {
  const index = createIndex('IVF8,Flat', dim, 'ip');
  await t.rejects(index.train(loose<Float32Array>(new Float64Array(dim * 100))), { code: 'BAD_INPUT' });
  await t.rejects(index.train(loose<Float32Array>([1, 2, 3])), { code: 'BAD_INPUT' });
  await t.rejects(index.train(data.subarray(0, dim * 100 + 3)), {
    code: 'BAD_INPUT',
    message: /multiple of dim/,
  });
  await t.rejects(index.train(new Float32Array(0)), { code: 'BAD_INPUT' });
  await t.rejects(index.train(withNaN(data, 77)), { code: 'BAD_INPUT', message: /NaN/ });
  await t.rejects(index.train(withNaN(data, 5, Number.POSITIVE_INFINITY)), { code: 'BAD_INPUT' });
  await t.rejects(index.train(data.subarray(0, dim * 4)), {
    code: 'BAD_INPUT',
    message: /at least one per list/,
  });
  t.equal(index.isTrained, false, 'failed training leaves it untrained');
  await index.train(data);
  await t.rejects(index.train(data), { code: 'CONFLICT' });
  await index.close();

  const flat = createIndex('Flat', dim, 'ip');
  await flat.train(data); // no-op, not an error: the builder trains every factory the same way
  await flat.add(data, ids);
  await t.rejects(flat.train(data), { code: 'CONFLICT', message: /holds vectors/ });
  await flat.close();
});

t.test('add: untrained, wrong ids, bad vectors', async (t) => {
  const untrained = createIndex('IVF8,Flat', dim, 'ip');
  await t.rejects(untrained.add(data, ids), { code: 'INDEX_NOT_TRAINED' });
  await untrained.close();

  const index = createIndex('Flat', dim, 'l2');
  await t.rejects(index.add(data, ids.subarray(0, 10)), { code: 'BAD_INPUT', message: /10 ids for 2000/ });
  await t.rejects(index.add(data, loose<BigInt64Array>(new BigUint64Array(2000))), { code: 'BAD_INPUT' });
  await t.rejects(index.add(data, loose<BigInt64Array>(new Int32Array(2000))), { code: 'BAD_INPUT' });
  await t.rejects(index.add(data, loose<BigInt64Array>(undefined)), { code: 'BAD_INPUT' });
  const negative = ids.slice();
  negative[9] = -5n;
  await t.rejects(index.add(data, negative), { code: 'BAD_INPUT', message: /negative/ });
  await t.rejects(index.add(withNaN(data, 1000), ids), { code: 'BAD_INPUT', message: /vector 62/ });
  await t.rejects(index.add(data.subarray(1), ids), { code: 'BAD_INPUT' });
  t.equal(index.ntotal, 0, 'nothing was added by the failed calls');
  await index.add(new Float32Array(0), new BigInt64Array(0));
  t.equal(index.ntotal, 0, 'an empty batch is a no-op');
  await index.close();
});

t.test('search: k, nprobe, kFactor, vectors, untrained', async (t) => {
  const index = await trainedIvf();
  for (const k of [0, -1, 1.5, maxK() + 1, Number.NaN, Number.POSITIVE_INFINITY]) {
    await t.rejects(index.search(query, k), { code: 'BAD_INPUT' }, `k = ${k}`);
  }
  await t.rejects(index.search(query, loose<number>('10')), { code: 'BAD_INPUT' });
  t.equal((await index.search(query, maxK())).ids.length, maxK(), `k = ${maxK()} is allowed`);
  for (const nprobe of [0, -3, 2.5, Number.NaN]) {
    await t.rejects(index.search(query, 5, { nprobe }), { code: 'BAD_INPUT' }, `nprobe = ${nprobe}`);
  }
  await t.rejects(index.search(query, 5, { nprobe: loose<number>('4') }), { code: 'BAD_INPUT' });
  await t.rejects(index.search(query, 5, { kFactor: 0.5 }), { code: 'BAD_INPUT' });
  await t.rejects(index.search(query, 4000, { kFactor: 100 }), { code: 'BAD_INPUT' });
  await t.rejects(index.search(query, 5, loose<object>(7)), { code: 'BAD_INPUT' });
  await t.rejects(index.search(withNaN(query, 3), 5), { code: 'BAD_INPUT', message: /NaN/ });
  await t.rejects(index.search(withNaN(query, 3, Number.NEGATIVE_INFINITY), 5), { code: 'BAD_INPUT' });
  await t.rejects(index.search(query.subarray(1), 5), { code: 'BAD_INPUT', message: /multiple of dim/ });
  await t.rejects(index.search(loose<Float32Array>(Array.from(query)), 5), { code: 'BAD_INPUT' });
  const empty = await index.search(new Float32Array(0), 5);
  t.equal(empty.ids.length, 0, 'no queries, no results');
  await index.close();

  const untrained = createIndex('IVF8,Flat', dim, 'ip');
  await t.rejects(untrained.search(query, 5), { code: 'INDEX_NOT_TRAINED' });
  await untrained.close();
});

t.test('closed index: every operation rejects with INDEX_CLOSED', async (t) => {
  const index = await trainedIvf();
  const other = await index.cloneEmpty();
  const pending = index.search(query, 5); // accepted before close: completes
  const closing = index.close();
  t.equal(index.closed, true);
  t.equal((await pending).ids.length, 5, 'a search accepted before close still completes');
  await closing;
  await t.rejects(index.search(query, 5), { code: 'INDEX_CLOSED' });
  await t.rejects(index.add(data, ids), { code: 'INDEX_CLOSED' });
  await t.rejects(index.train(data), { code: 'INDEX_CLOSED' });
  await t.rejects(index.write(join(dir, 'closed.faiss')), { code: 'INDEX_CLOSED' });
  await t.rejects(index.cloneEmpty(), { code: 'INDEX_CLOSED' });
  await t.rejects(index.merge(other), { code: 'INDEX_CLOSED' });
  await t.rejects(other.merge(index), { code: 'INDEX_CLOSED' });
  await index.close(); // closing twice is fine
  await other.close();
});

t.test('merge: mismatches are refused before anything moves', async (t) => {
  const a = await trainedIvf();
  const b = await a.cloneEmpty();
  await b.add(data.subarray(0, 100 * dim), denseIds(100, 5000));
  await t.rejects(a.merge(a), { code: 'BAD_INPUT', message: /itself/ });
  await t.rejects(a.merge(loose<typeof a>({})), { code: 'BAD_INPUT' });
  const otherDim = createIndex('Flat', dim * 2, 'ip');
  const flat = createIndex('Flat', dim, 'ip');
  await t.rejects(flat.merge(otherDim), { code: 'DIM_MISMATCH' });
  await t.rejects(a.merge(flat), { code: 'BAD_INPUT', message: /different structures/ });
  // Trained separately: different coarse centroids, FAISS's own compatibility check refuses.
  const separate = createIndex('IVF8,Flat', dim, 'ip');
  await separate.train(gaussianVectors(2000, dim, 99));
  await t.rejects(a.merge(separate), { code: 'FAISS_ERROR' });
  t.equal(a.ntotal, 2000);
  t.equal(b.ntotal, 100, 'nothing moved');
  await a.merge(b);
  t.equal(a.ntotal, 2100);
  await Promise.all([a, b, otherDim, flat, separate].map((x) => x.close()));
});

t.test('files: missing, not an index, truncated, directory, unwritable', async (t) => {
  await t.rejects(readIndex(join(dir, 'nope.faiss')), { code: 'FILE_NOT_FOUND' });
  await t.rejects(readIndex(dir), { code: 'BAD_FILE' });
  await t.rejects(readIndex(loose<string>(42)), { code: 'BAD_INPUT' });
  const junk = join(dir, 'junk.faiss');
  writeFileSync(junk, 'this is not a FAISS index, just some bytes'.repeat(10));
  await t.rejects(readIndex(junk), { code: 'BAD_FILE' });
  await t.rejects(readIndex(junk, { mmap: true }), { code: 'BAD_FILE' });

  const index = createIndex('IVF8,SQ8', dim, 'ip');
  await index.train(data);
  await index.add(data, ids);
  const good = join(dir, 'good.faiss');
  await index.write(good);
  for (const fraction of [0.3, 0.9, 0.999]) {
    const cut = join(dir, `cut-${fraction}.faiss`);
    copyFileSync(good, cut);
    truncateSync(cut, Math.floor(statSync(good).size * fraction));
    await t.rejects(readIndex(cut), { code: 'BAD_FILE' }, `plain read, ${fraction} of the file`);
    // Without the check, mmap "succeeds" and search reads past the end of the file (garbage or SIGBUS).
    await t.rejects(
      readIndex(cut, { mmap: true }),
      { code: 'BAD_FILE' },
      `mmap read, ${fraction} of the file`,
    );
  }
  await t.rejects(index.write(join(dir, 'no', 'such', 'dir', 'x.faiss')), { code: 'FAISS_ERROR' });
  await t.rejects(index.write(''), { code: 'BAD_INPUT' });
  await index.close();
});

t.test('mmap indexes are read-only (the FAISS path would abort the process)', async (t) => {
  const index = createIndex('IVF8,SQ8', dim, 'ip');
  await index.train(data);
  await index.add(data, ids);
  const path = join(dir, 'ro.faiss');
  await index.write(path);
  const mapped = await readIndex(path, { mmap: true });
  t.equal(mapped.readOnly, true);
  // IVF-SQ8 add on read-only lists throws inside an OpenMP region in FAISS: std::terminate, no catch.
  await t.rejects(mapped.add(data.subarray(0, dim), denseIds(1, 9999)), { code: 'INDEX_READ_ONLY' });
  await t.rejects(mapped.train(data), { code: 'INDEX_READ_ONLY' });
  await t.rejects(mapped.write(join(dir, 'copy.faiss')), { code: 'INDEX_READ_ONLY' });
  await t.rejects(mapped.cloneEmpty(), { code: 'INDEX_READ_ONLY' });
  const clone = await index.cloneEmpty();
  await t.rejects(clone.merge(mapped), { code: 'INDEX_READ_ONLY' });
  await t.rejects(mapped.merge(clone), { code: 'INDEX_READ_ONLY' });
  const r = await mapped.search(query, 3, { nprobe: 8 });
  t.equal(r.ids[0], 0n, 'still searchable');
  await Promise.all([index, mapped, clone].map((x) => x.close()));
});

t.test('huge finite components are refused (FAISS k-means asserts on overflowed distances)', async (t) => {
  // Regression (native fuzz): 3e38 passes an isfinite check, squared distances overflow to Infinity,
  // k-means assigns a point to centroid -1 and Clustering.cpp's assert aborts the process.
  const poisoned = withNaN(data, 17, 3e38);
  for (const factory of ['IVF4,PQ4np', 'IVF8,Flat', 'IVF8,SQ8']) {
    const index = createIndex(factory, dim, 'l2');
    await t.rejects(index.train(poisoned), { code: 'BAD_INPUT', message: /beyond/ }, factory);
    await index.close();
  }
  await t.rejects(kmeans(withNaN(data, 3, -1e20), dim, 4), { code: 'BAD_INPUT' });
  const flat = createIndex('Flat', dim, 'l2');
  await t.rejects(flat.add(withNaN(data, 5, 1e16), ids), { code: 'BAD_INPUT' });
  await t.rejects(flat.search(withNaN(query, 1, 1e30), 3), { code: 'BAD_INPUT' });
  await flat.add(withNaN(data, 5, 1e6), ids); // large but sane values are fine
  await flat.close();
});

t.test('write replaces the file atomically: a memory-mapped reader of the old file survives', async (t) => {
  // Regression (native fuzz): write truncated the target in place; an index that had it mmap'd then
  // read pages past the new end of file and died of SIGBUS.
  const a = await trainedIvf();
  const path = join(dir, 'replaced.faiss');
  await a.write(path);
  const mapped = await readIndex(path, { mmap: true });
  const small = createIndex('Flat', dim, 'ip');
  await small.add(data.subarray(0, dim), denseIds(1));
  await small.write(path);
  const r = await mapped.search(query, 3, { nprobe: 8 });
  t.equal(r.ids[0], 0n, 'the old mapping still answers');
  t.equal((await readIndex(path)).ntotal, 1, 'the file is the new index');
  await t.rejects(a.write(join(dir, 'no', 'such', 'dir', 'x.faiss')), { code: 'FAISS_ERROR' });
  t.same(
    readdirSync(dir).filter((f) => f.includes('.tmp-')),
    [],
    'no temporary file left behind',
  );
  await Promise.all([a, mapped, small].map((x) => x.close()));
});

t.test('id selectors and rescoring with ids out of range', async (t) => {
  const index = await trainedIvf();
  for (const bad of [-(2n ** 63n), -1n, 2n ** 63n - 1n, 10_000_000n]) {
    const r = await index.search(query, 3, { nprobe: 8, ids: BigInt64Array.from([bad, 1n, 2n]) });
    t.same([...r.ids].sort(), [-1n, 1n, 2n].sort(), `selector with ${bad}: only the real ids come back`);
  }
  await t.rejects(index.search(query, 3, { ids: loose<BigInt64Array>([1, 2]) }), { code: 'BAD_INPUT' });
  await index.close();

  const path = join(dir, 'half.f16');
  writeFileSync(path, new Uint8Array(2 * dim * 10));
  const hv = await HalfVectors.open(path, dim);
  for (const bad of [10n, 11n, 2n ** 62n, 2n ** 63n - 1n]) {
    await t.rejects(
      hv.rescore(query, BigInt64Array.from([0n, bad]), 2, 'ip'),
      { code: 'BAD_INPUT' },
      `id ${bad}`,
    );
  }
  await t.rejects(hv.rescore(query.subarray(1), BigInt64Array.from([0n]), 1, 'ip'), { code: 'BAD_INPUT' });
  await t.rejects(hv.rescore(query, BigInt64Array.from([0n]), 1, loose<Metric>('cos')), {
    code: 'BAD_INPUT',
  });
  const ok = await hv.rescore(query, BigInt64Array.from([3n, -1n, -(2n ** 63n)]), 3, 'l2');
  t.same([...ok.ids], [3n, -1n, -1n], "negative ids are empty slots (FAISS's -1), not reads");
  await hv.close();
  await t.rejects(hv.rescore(query, BigInt64Array.from([0n]), 1, 'ip'), { code: 'INDEX_CLOSED' });
  t.resolves(hv.close(), 'closing twice is fine');
});

t.test('concurrent close: racing searches, adds and closes all settle, nothing crashes', async (t) => {
  for (let round = 0; round < 20; round++) {
    const index = await trainedIvf();
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 12; i++) {
      calls.push(index.search(query, 5, { nprobe: 4 }));
      if (i % 3 === 0) calls.push(index.add(data.subarray(0, 10 * dim), denseIds(10, 10_000 + i * 10)));
      if (i === round % 12) calls.push(index.close(), index.close());
      if (i % 4 === 0) calls.push(index.write(join(dir, `race-${round}.faiss`)));
    }
    const settled = await Promise.allSettled(calls);
    for (const s of settled) {
      if (s.status === 'rejected') t.equal((s.reason as ParamineError).code, 'INDEX_CLOSED');
    }
    t.equal(index.closed, true);
  }
});

t.test('mapFile maps windows; a window past the ArrayBuffer limit is an error, not an abort', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'paramine-map-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'col.f32');
  const rows = Float32Array.from({ length: 3 * 4096 }, (_, i) => i);
  writeFileSync(path, rows);
  const whole = mapFile(path);
  t.equal(whole?.byteLength, rows.byteLength);
  const second = mapFile(path, 4096 * 4, 4096 * 4) as ArrayBuffer;
  t.same(
    [new Float32Array(second)[0], new Float32Array(second)[4095]],
    [4096, 8191],
    'the second page-aligned window',
  );
  t.equal(
    mapFile(path, 2 * 4096 * 4, 10 ** 9)?.byteLength,
    4096 * 4,
    'a window is cut at the end of the file',
  );
  t.throws(() => mapFile(path, 3), { code: 'BAD_INPUT' }, 'offsets are page-aligned');
  // A sparse file of 9 GiB: mapping it whole exceeds V8's limit for one ArrayBuffer.
  const big = join(dir, 'big.f32');
  writeFileSync(big, '');
  truncateSync(big, 9 * 2 ** 30);
  t.throws(() => mapFile(big), { code: 'BAD_FILE' }, 'refused with an error the caller can act on');
  t.equal(mapFile(big, 2 ** 30, 2 ** 30)?.byteLength, 2 ** 30, 'the same file in a 1 GiB window');
});

t.test('the process survived every error above', async (t) => {
  const index = await trainedIvf('l2');
  const r = await index.search(query, 1, { nprobe: 8 });
  t.equal(r.ids[0], 0n);
  t.equal(r.distances[0], 0);
  await index.close();
});

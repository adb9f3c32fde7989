import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { Encoder } from '../../src/encode/index.js';
import { fromHalf, readManifest, toHalf, VectorFile } from '../../src/index/index.js';
import { buildIndex } from '../../src/indexer/build.js';
import { SentenceStore } from '../../src/store/index.js';
import { gaussianVectors } from '../../src/testing/index.js';
import { syntheticSentence } from '../helpers/corpus.js';

const MODEL = 'test/fixtures/tiny-encoder';
const dir = mkdtempSync(join(tmpdir(), 'paramine-vectors-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const half = (x: number) => toHalf(Float32Array.of(x))[0];
const float = (h: number) => fromHalf(Uint16Array.of(h))[0];

t.test('half conversion is exact on known values', async (t) => {
  const cases: Array<[number, number, string]> = [
    [0, 0x0000, 'zero'],
    [-0, 0x8000, 'negative zero'],
    [1, 0x3c00, 'one'],
    [-2, 0xc000, 'minus two'],
    [0.1, 0x2e66, '0.1 (rounded)'],
    [1 / 3, 0x3555, '1/3 (rounded)'],
    [65504, 0x7bff, 'largest half'],
    [65519, 0x7bff, 'just below the overflow tie'],
    [65520, 0x7c00, 'overflow tie rounds to infinity'],
    [1e9, 0x7c00, 'overflow'],
    [-1e9, 0xfc00, 'negative overflow'],
    [Number.POSITIVE_INFINITY, 0x7c00, 'infinity'],
    [Number.NEGATIVE_INFINITY, 0xfc00, 'minus infinity'],
    [2 ** -14, 0x0400, 'smallest normal (6.1035e-5)'],
    [6.1e-5, 0x03ff, '6.1e-5: largest subnormal'],
    [-6.1e-5, 0x83ff, '-6.1e-5'],
    [2 ** -24, 0x0001, 'smallest subnormal'],
    [2 ** -25, 0x0000, 'tie between 0 and the smallest subnormal: to even (0)'],
    [2 ** -25 * 1.001, 0x0001, 'just above that tie'],
    [3 * 2 ** -25, 0x0002, 'subnormal tie 1.5 ulp: to even (2)'],
    [5 * 2 ** -25, 0x0002, 'subnormal tie 2.5 ulp: to even (2)'],
    [2 ** -30, 0x0000, 'underflow'],
    [-(2 ** -30), 0x8000, 'underflow keeps the sign'],
    [1 + 2 ** -11, 0x3c00, 'tie 1 + half ulp: to even (1)'],
    [1 + 3 * 2 ** -11, 0x3c02, 'tie 1 + 1.5 ulp: to even'],
    [1 + 2 ** -11 + 2 ** -20, 0x3c01, 'just above a tie rounds up'],
    [2049, 0x6800, 'tie 2049: to even (2048)'],
    [2051, 0x6802, 'tie 2051: to even (2052)'],
    [2 ** -14 - 2 ** -25, 0x0400, 'tie at the subnormal/normal boundary carries into the exponent'],
  ];
  for (const [x, h, what] of cases) t.equal(half(x), h, `${what}: ${x} -> 0x${h.toString(16)}`);
  const nan = half(Number.NaN)!;
  t.equal(nan & 0x7c00, 0x7c00, 'NaN: exponent all ones');
  t.not(nan & 0x3ff, 0, 'NaN: non-zero mantissa');

  t.equal(float(0x3c00), 1);
  t.equal(float(0x7bff), 65504);
  t.equal(float(0x0400), 2 ** -14);
  t.equal(float(0x03ff), 1023 * 2 ** -24);
  t.equal(float(0x0001), 2 ** -24);
  t.equal(float(0x3555), 0.333251953125);
  t.ok(Object.is(float(0x8000), -0), '0x8000 is -0');
  t.equal(float(0x7c00), Number.POSITIVE_INFINITY);
  t.equal(float(0xfc00), Number.NEGATIVE_INFINITY);
  t.ok(Number.isNaN(float(0x7e00)));

  // Every half survives half -> float -> half (NaN payloads included).
  const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
  const back = toHalf(fromHalf(all));
  let mismatches = 0;
  for (let i = 0; i < all.length; i++) if (back[i] !== all[i]) mismatches++;
  t.equal(mismatches, 0, 'all 65536 halves round-trip');
});

t.test('half conversion of random unit vectors: relative error < 1e-3', async (t) => {
  const dim = 384;
  const n = 2000;
  const v = gaussianVectors(n, dim, 42, true);
  const back = fromHalf(toHalf(v));
  let maxRowErr = 0;
  let maxElemErr = 0;
  for (let r = 0; r < n; r++) {
    let err = 0;
    let norm = 0;
    for (let j = 0; j < dim; j++) {
      const x = v[r * dim + j]!;
      const y = back[r * dim + j]!;
      err += (x - y) ** 2;
      norm += x * x;
      // Elementwise bound for normal halves: half an ulp, 2^-11.
      if (Math.abs(x) >= 2 ** -14) maxElemErr = Math.max(maxElemErr, Math.abs(x - y) / Math.abs(x));
    }
    maxRowErr = Math.max(maxRowErr, Math.sqrt(err / norm));
  }
  t.ok(maxRowErr < 1e-3, `max relative row error ${maxRowErr}`);
  t.ok(maxElemErr <= 2 ** -11, `max relative element error ${maxElemErr}`);
});

t.test('the indexer keeps every embedding as vectors.f16, in id order', async (t) => {
  const lines = Array.from({ length: 150 }, (_, i) => syntheticSentence(i));
  const input = join(dir, 'corpus.txt');
  writeFileSync(input, `${lines.join('\n')}\n`);
  const out = join(dir, 'f16');
  // Several spill chunks (the last one short) over two shards.
  const summary = await buildIndex({
    inputs: [input],
    out,
    model: MODEL,
    checkpointEvery: 32,
    shards: 2,
    quiet: true,
  });
  const n = summary.vectors;
  t.ok(n > 100, `${n} vectors`);

  const encoder = await Encoder.open(MODEL);
  t.teardown(() => encoder.close());
  const dim = encoder.dim;
  const manifest = await readManifest(out);
  t.match(manifest.vectors, { file: 'vectors.f16', dtype: 'float16', count: n, dim, bytes: n * dim * 2 });
  t.equal(statSync(join(out, 'vectors.f16')).size, n * dim * 2);
  t.same(
    readdirSync(out).filter((f) => /\.tmp|\.partial/.test(f)),
    [],
    'no temporary left',
  );

  const vectors = await VectorFile.open(out);
  if (!vectors) throw new Error('no vectors');
  t.teardown(() => vectors.close());
  t.equal(vectors.count, n);
  t.equal(vectors.dim, dim);

  // Row i is the embedding of the sentence stored under id i.
  const store = SentenceStore.open(join(out, 'store'), { readOnly: true });
  const texts = [...store.range(0, n)].map((r) => r.record.text);
  await store.close();
  t.equal(texts.length, n);
  const expected = await encoder.encode(texts);
  const rows = await vectors.read(0, n);
  let minCos = 1;
  for (let i = 0; i < n; i++) {
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (let j = 0; j < dim; j++) {
      const a = rows[i * dim + j]!;
      const b = expected[i * dim + j]!;
      dot += a * b;
      na += a * a;
      nb += b * b;
    }
    minCos = Math.min(minCos, dot / Math.sqrt(na * nb));
  }
  t.ok(minCos > 0.999, `min cosine with direct encoding ${minCos}`);

  // Partial ranges and arbitrary ids (repeats, any order) agree with the full read.
  t.same([...(await vectors.read(40, 7))], [...rows.subarray(40 * dim, 47 * dim)]);
  t.equal((await vectors.read(n, 0)).length, 0, 'empty range at the end');
  const ids = [n - 1, 3, 77, 3, 0, 78, 120, 5];
  const picked = await vectors.readIds(ids);
  t.equal(picked.length, ids.length * dim);
  ids.forEach((id, k) => {
    t.same(
      [...picked.subarray(k * dim, (k + 1) * dim)],
      [...rows.subarray(id * dim, (id + 1) * dim)],
      `id ${id}`,
    );
  });
  t.equal((await vectors.readIds([])).length, 0);
  // Into a caller's buffer (a view past its start, as a reused buffer's rows are): the same rows, there.
  const into = new Float32Array((ids.length + 2) * dim).subarray(dim, (ids.length + 1) * dim);
  t.equal(await vectors.readIds(ids, into), into, 'the rows are written into the array given');
  t.same([...into], [...picked], 'the same rows as a new array');
  await t.rejects(vectors.readIds(ids, new Float32Array(dim)), { code: 'BAD_INPUT', field: 'into' });

  // Out of range.
  await t.rejects(vectors.read(n - 2, 3), { code: 'BAD_INPUT' });
  await t.rejects(vectors.read(-1, 1), { code: 'BAD_INPUT' });
  await t.rejects(vectors.read(0.5, 1), { code: 'BAD_INPUT' });
  await t.rejects(vectors.readIds([0, n]), { code: 'BAD_INPUT', field: 'ids[1]' });
  await t.rejects(vectors.readIds([-1]), { code: 'BAD_INPUT' });

  // A file that does not match its manifest.
  const truncated = join(dir, 'f16-truncated');
  await buildIndex({ inputs: [input], out: truncated, model: MODEL, checkpointEvery: 32, quiet: true });
  truncateSync(join(truncated, 'vectors.f16'), n * dim * 2 - 2);
  await t.rejects(VectorFile.open(truncated), { code: 'BAD_FILE', message: /bytes/ });
  rmSync(join(truncated, 'vectors.f16'));
  await t.rejects(VectorFile.open(truncated), { code: 'FILE_NOT_FOUND', message: /vectors\.f16 is missing/ });

  await vectors.close();
  await t.rejects(vectors.read(0, 1), { code: 'INDEX_CLOSED' });
});

t.test('--vectors none keeps no embeddings', async (t) => {
  const input = join(dir, 'none.txt');
  writeFileSync(input, `${Array.from({ length: 40 }, (_, i) => syntheticSentence(i)).join('\n')}\n`);
  const out = join(dir, 'none');
  await promisify(execFile)(process.execPath, [
    ...process.execArgv,
    'src/cli.ts',
    'index',
    '--input',
    input,
    '--out',
    out,
    '--model',
    MODEL,
    '--vectors',
    'none',
    '--quiet',
  ]);
  t.ok(existsSync(join(out, 'manifest.json')), 'index built');
  t.notOk(existsSync(join(out, 'vectors.f16')), 'no vectors.f16');
  t.same(
    readdirSync(out).filter((f) => /\.tmp|\.partial/.test(f)),
    [],
    'no temporary',
  );
  t.equal((await readManifest(out)).vectors, undefined);
  t.equal(await VectorFile.open(out), undefined);

  await t.rejects(
    buildIndex({
      inputs: [input],
      out: join(dir, 'bad'),
      model: MODEL,
      vectors: 'f32' as 'f16',
      quiet: true,
    }),
    { code: 'BAD_INPUT' },
  );
});

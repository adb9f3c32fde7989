/**
 * The indexer's scale paths with the real encoder: embeddings computed elsewhere (--embeddings, a
 * misaligned input refused), half-float spills and the resume of a build that spilled float32, and
 * phase 2 resuming with its trained index and finished shards kept.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { Encoder } from '../../src/encode/index.js';
import { fromHalf, readManifest, ShardedIndex, toHalf, VectorFile } from '../../src/index/index.js';
import { buildIndex } from '../../src/indexer/build.js';
import { STATE_KEY } from '../../src/indexer/state.js';
import { SentenceStore } from '../../src/store/index.js';
import { syntheticSentence } from '../helpers/corpus.js';

const MODEL = 'all-minilm-l6-v2';
const dir = mkdtempSync(join(tmpdir(), 'paramine-indexer-scale-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const lines = Array.from({ length: 300 }, (_, i) => syntheticSentence(i));
lines.splice(40, 0, ''); // an empty line is a record too: it needs its row
const input = join(dir, 'corpus.txt');
writeFileSync(input, `${lines.join('\n')}\n`);

/** A .npy file (format 1.0) of rows x dim little-endian floats. */
function npy(path: string, data: Float32Array, dim: number, dtype: 'f2' | 'f4' = 'f2'): string {
  const rows = data.length / dim;
  let header = `{'descr': '<${dtype}', 'fortran_order': False, 'shape': (${rows}, ${dim}), }`;
  header += `${' '.repeat(64 - ((10 + header.length + 1) % 64))}\n`;
  const body = dtype === 'f2' ? Buffer.from(toHalf(data).buffer) : Buffer.from(data.buffer);
  const head = Buffer.alloc(10);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]).copy(head);
  head.writeUInt16LE(header.length, 8);
  writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
  return path;
}

let rows: Float32Array;
let dim: number;

t.before(async () => {
  // "Computed elsewhere": the same model over the raw lines (an empty line gets a zero row).
  const encoder = await Encoder.open(`models/${MODEL}`);
  dim = encoder.dim;
  rows = new Float32Array(lines.length * dim);
  const texts = lines.map((l) => l || ' ');
  rows.set(await encoder.encode(texts));
  await encoder.close();
});

t.test('--embeddings: the vectors come from the .npy rows, nothing re-encoded beyond a check', async (t) => {
  const out = join(dir, 'from-npy');
  const file = npy(join(dir, 'corpus.npy'), rows, dim);
  writeFileSync(`${file}.json`, JSON.stringify({ model: MODEL }));
  const s = await buildIndex({
    inputs: [input],
    out,
    model: MODEL,
    embeddings: [file],
    checkpointEvery: 64,
    quiet: true,
  });
  t.equal(s.vectors, 300, 'the empty line is dropped, its row skipped');
  const kept = await VectorFile.open(out);
  const got = await kept!.read(0, 300);
  const want = toHalf(rows.slice(0, 40 * dim));
  t.same([...toHalf(got.subarray(0, 40 * dim))], [...want], 'rows before the empty line, as given');
  const after = fromHalf(toHalf(rows.subarray(41 * dim, 42 * dim)));
  t.same(
    [...got.subarray(40 * dim, 41 * dim)].map((x) => x.toFixed(3)),
    [...after].map((x) => x.toFixed(3)),
    'id 40 = row 41',
  );
  await kept!.close();
  const index = await ShardedIndex.open(out);
  const hit = await index.search(rows.slice(7 * dim, 8 * dim), 1);
  t.equal(hit.ids[0], 7n);
  await index.close();
});

t.test('--embeddings: misaligned or mismatched inputs are refused with a clear code', async (t) => {
  const shifted = new Float32Array(rows.length);
  shifted.set(rows.subarray(dim)); // every row moved up by one: the classic off-by-one
  await t.rejects(
    buildIndex({
      inputs: [input],
      out: join(dir, 'x1'),
      model: MODEL,
      embeddings: [npy(join(dir, 'shifted.npy'), shifted, dim)],
      quiet: true,
    }),
    { code: 'EMBEDDINGS_MISMATCH', message: /average cosine .* misaligned/ },
  );
  await t.rejects(
    buildIndex({
      inputs: [input],
      out: join(dir, 'x2'),
      model: MODEL,
      embeddings: [npy(join(dir, 'short.npy'), rows.slice(0, -dim), dim, 'f4')],
      quiet: true,
    }),
    { code: 'EMBEDDINGS_MISMATCH', message: /300 rows but its input has 301 records/ },
  );
  await t.rejects(
    buildIndex({
      inputs: [input],
      out: join(dir, 'x3'),
      model: MODEL,
      embeddings: [npy(join(dir, 'narrow.npy'), new Float32Array(301 * 8), 8)],
      quiet: true,
    }),
    { code: 'DIM_MISMATCH' },
  );
  const other = npy(join(dir, 'other.npy'), rows, dim);
  writeFileSync(`${other}.json`, JSON.stringify({ model: 'bge-small-en-v15' }));
  await t.rejects(
    buildIndex({ inputs: [input], out: join(dir, 'x4'), model: MODEL, embeddings: [other], quiet: true }),
    { code: 'MODEL_MISMATCH' },
  );
  await t.rejects(
    buildIndex({
      inputs: [input],
      out: join(dir, 'x5'),
      model: MODEL,
      embeddings: [other, other],
      quiet: true,
    }),
    { code: 'BAD_INPUT', message: /2 --embeddings files for 1 --input/ },
  );
});

/** Rewinds a finished build to the start of phase 2, as if it had been killed there. */
async function rewind(out: string, edit: (state: Record<string, unknown>) => Record<string, unknown>) {
  rmSync(join(out, 'manifest.json'));
  const store = SentenceStore.open(join(out, 'store'));
  const state = store.getState<Record<string, unknown>>(STATE_KEY)!;
  await store.commit([], { [STATE_KEY]: edit({ ...state, phase: 'index' }) });
  await store.close();
}

t.test('spills are half floats; a build that spilled float32 resumes from them', async (t) => {
  const out = join(dir, 'spill');
  const ref = await buildIndex({
    inputs: [input],
    out,
    model: MODEL,
    checkpointEvery: 64,
    keepEmbeddings: true,
    quiet: true,
  });
  const work = join(out, 'work');
  const spills = readdirSync(work)
    .filter((f) => f.startsWith('emb-'))
    .sort();
  t.same(spills.slice(0, 2), ['emb-00000000.f16', 'emb-00000001.f16']);
  t.equal(statSync(join(work, spills[0]!)).size, 64 * dim * 2, '2 bytes a dimension');
  const before = readFileSync(join(out, 'vectors.f16'));
  // An older paramine wrote float32 spills: convert them back and resume phase 2 from them.
  for (const f of spills) {
    const halves = new Uint16Array(new Uint8Array(readFileSync(join(work, f))).buffer);
    writeFileSync(join(work, f.replace('.f16', '.f32')), Buffer.from(fromHalf(halves).buffer));
    rmSync(join(work, f));
  }
  rmSync(join(out, 'vectors.f16'));
  await rewind(out, (s) => ({ ...s, index: undefined }));
  const resumed = await buildIndex({
    inputs: [input],
    out,
    model: MODEL,
    checkpointEvery: 64,
    resume: true,
    quiet: true,
  });
  t.equal(resumed.vectors, ref.vectors);
  t.ok(
    readFileSync(join(out, 'vectors.f16')).equals(before),
    'the same half floats, read from float32 spills',
  );
});

t.test('phase 2 resumes with its trained index and finished shards kept', async (t) => {
  const out = join(dir, 'resume2');
  const common = {
    inputs: [input],
    out,
    model: MODEL,
    factory: 'IVF8,PQ8np',
    shards: 3,
    keepEmbeddings: true,
    quiet: true,
  };
  await buildIndex(common);
  const m = await readManifest(out);
  t.equal(m.shards.length, 3);
  t.equal(m.search.refine, 'vectors', 'kept vectors re-score a given factory too');
  const q = rows.slice(7 * dim, 8 * dim);
  const before = await ShardedIndex.open(out).then(async (ix) => {
    const r = await ix.search(q, 5);
    await ix.close();
    return r;
  });
  // As if killed after shard 0 was written: the others and the manifest are missing.
  const first = statSync(join(out, 'shard-000.faiss')).mtimeMs;
  rmSync(join(out, 'shard-001.faiss'));
  rmSync(join(out, 'shard-002.faiss'));
  await rewind(out, (s) => ({ ...s, index: { ...(s.index as object), done: [0] } }));
  const again = await buildIndex({ ...common, resume: true });
  t.equal(again.shards, 3);
  t.equal(statSync(join(out, 'shard-000.faiss')).mtimeMs, first, 'the finished shard is not redone');
  t.ok(existsSync(join(out, 'shard-002.faiss')), 'the missing shards are filled');
  const index = await ShardedIndex.open(out);
  t.equal(index.ntotal, 300);
  const after = await index.search(q, 5);
  t.same([...after.ids], [...before.ids], 'the same trained index: the same answers');
  t.equal(after.ids[0], 7n, 'the re-scored top hit is exact');
  await index.close();
});

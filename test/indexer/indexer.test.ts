import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { Encoder } from '../../src/encode/index.js';
import { ShardedIndex } from '../../src/index/index.js';
import { buildIndex } from '../../src/indexer/build.js';
import { SentenceStore } from '../../src/store/index.js';
import { syntheticSentence } from '../helpers/corpus.js';

const MODEL = 'all-minilm-l6-v2';
const dir = mkdtempSync(join(tmpdir(), 'paramine-indexer-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, content: string | Buffer): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}

/** Every (id, text, meta) of a built index, in id order. */
async function contents(out: string) {
  const store = SentenceStore.open(join(out, 'store'), { readOnly: true });
  const rows = [...store.range(0, Number.MAX_SAFE_INTEGER)].map((r) => [r.id, r.record.text, r.record.meta]);
  await store.close();
  return rows;
}

t.test('a small corpus round-trips: texts, metadata, dedup counts, filters, FAISS ids', async (t) => {
  const txt = write(
    'a.txt',
    [
      'The cat sat on the mat.',
      'the cat sat on the mat', // duplicate by key (case, punctuation)
      '',
      '   ',
      '!!!', // punctuation only: empty
      'Hi', // 1 token: below --min-tokens 2
      'A dog barked at the postman all morning long.',
      'The  cat   sat on the mat.', // duplicate after whitespace normalization
      `${'word '.repeat(60)}end`, // 61 tokens: above --max-tokens 50
    ].join('\n'),
  );
  const jsonl = write(
    'b.jsonl.gz',
    gzipSync(
      [
        JSON.stringify({ text: 'Rain fell on the quiet village.', paper: 'P1' }),
        JSON.stringify({ text: 'A dog barked at the postman all morning long!', paper: 'P2' }), // duplicate
        JSON.stringify({ text: 'Wheat prices rose sharply in the spring.', paper: 'P3' }),
      ].join('\n'),
    ),
  );
  const out = join(dir, 'small');
  const summary = await buildIndex({
    inputs: [txt, jsonl],
    out,
    model: MODEL,
    minTokens: 2,
    maxTokens: 50,
    quiet: true,
  });
  t.same(summary.counters, { read: 12, kept: 4, duplicates: 3, empty: 3, short: 1, long: 1, bad: 0 });
  t.equal(summary.vectors, 4);
  t.equal(summary.factory, 'Flat');
  t.notOk(existsSync(join(out, 'work')), 'spilled embeddings removed after a finished build');

  // --resume on the finished build: nothing redone, exit as a success; other inputs are still refused.
  const again = { inputs: [txt, jsonl], out, model: MODEL, minTokens: 2, maxTokens: 50, quiet: true };
  const resumed = await buildIndex({ ...again, resume: true });
  t.ok(resumed.resumed);
  t.same([resumed.vectors, resumed.factory, resumed.counters], [4, 'Flat', summary.counters]);
  await t.rejects(buildIndex({ ...again, inputs: [txt], resume: true }), { code: 'CONFLICT' });
  await t.rejects(buildIndex(again), { code: 'CONFLICT', message: /already holds a finished index/ });

  t.same(await contents(out), [
    [0, 'The cat sat on the mat.', undefined],
    [1, 'A dog barked at the postman all morning long.', undefined],
    [2, 'Rain fell on the quiet village.', { paper: 'P1' }],
    [3, 'Wheat prices rose sharply in the spring.', { paper: 'P3' }],
  ]);

  // FAISS holds the same ids: each stored text's own vector finds itself first, with cosine ~1.
  const encoder = await Encoder.open(`models/${MODEL}`);
  const index = await ShardedIndex.open(out, { model: { sha256: encoder.onnxSha256 }, dim: encoder.dim });
  const store = SentenceStore.open(join(out, 'store'), { readOnly: true });
  t.equal(index.ntotal, store.count);
  const rows = [...store.range(0, 100)];
  const vecs = await encoder.encode(rows.map((r) => r.record.text));
  const { ids, distances } = await index.search(vecs, 1);
  t.same(
    [...ids].map(Number),
    rows.map((r) => r.id),
  );
  for (const d of distances) t.ok(d > 0.999, `self-similarity ${d}`);
  await Promise.all([store.close(), index.close(), encoder.close()]);
});

t.test('a build killed with SIGKILL and resumed equals an uninterrupted build', async (t) => {
  const lines = Array.from({ length: 700 }, (_, i) => syntheticSentence(i));
  // Sprinkle duplicates so dedup state must survive the crash too.
  for (let i = 0; i < 700; i += 37) lines.splice(i + 5, 0, lines[i]?.toUpperCase() ?? '');
  const input = write('synthetic.txt', `${lines.join('\n')}\n`);
  const common = { inputs: [input], model: MODEL, checkpointEvery: 64, quiet: true };

  const reference = join(dir, 'reference');
  const ref = await buildIndex({ ...common, out: reference });

  const killed = join(dir, 'killed');
  const child = spawn(
    process.execPath,
    [
      ...process.execArgv,
      'src/cli.ts',
      'index',
      '--input',
      input,
      '--out',
      killed,
      '--model',
      MODEL,
      '--checkpoint-every',
      '64',
      '--quiet',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, sig) => resolve(sig)),
  );
  // Kill once at least three checkpoints are on disk, i.e. mid-way through embedding.
  const third = join(killed, 'work', 'emb-00000002.f16');
  const deadline = Date.now() + 120_000;
  while (!existsSync(third) && Date.now() < deadline && child.exitCode === null)
    await new Promise((r) => setTimeout(r, 20));
  t.ok(existsSync(third), `child reached its third checkpoint (stderr: ${stderr.slice(-400)})`);
  child.kill('SIGKILL');
  t.equal(await exited, 'SIGKILL', 'the build was killed, not finished');
  t.notOk(existsSync(join(killed, 'manifest.json')), 'no manifest: the index is not complete');

  await t.rejects(buildIndex({ ...common, out: killed }), { code: 'CONFLICT' }, 'refuses without --resume');
  const resumed = await buildIndex({ ...common, out: killed, resume: true });
  t.ok(resumed.resumed);
  t.same(resumed.counters, ref.counters, 'same counts (read, kept, duplicates, filtered)');
  t.same(
    await contents(killed),
    await contents(reference),
    'same id <-> text mapping, nothing lost or doubled',
  );

  // Same vectors under the same ids: exact search answers identically.
  const encoder = await Encoder.open(`models/${MODEL}`);
  const q = await encoder.encode(lines.slice(0, 20));
  const [a, b] = await Promise.all([ShardedIndex.open(reference), ShardedIndex.open(killed)]);
  const [ra, rb] = await Promise.all([a.search(q, 10), b.search(q, 10)]);
  t.same([...rb.ids], [...ra.ids]);
  t.same([...rb.distances], [...ra.distances]);
  await Promise.all([a.close(), b.close(), encoder.close()]);
});

t.test(
  'bad inputs: missing file, unreadable gzip, invalid JSON line, model mismatch on resume',
  async (t) => {
    await t.rejects(
      buildIndex({ inputs: [join(dir, 'missing.txt')], out: join(dir, 'x1'), model: MODEL, quiet: true }),
      {
        code: 'FILE_NOT_FOUND',
      },
    );
    const gz = gzipSync('one line here\n'.repeat(2000));
    const broken = write('broken.txt.gz', gz.subarray(0, gz.length - 40));
    await t.rejects(buildIndex({ inputs: [broken], out: join(dir, 'x2'), model: MODEL, quiet: true }), {
      code: 'BAD_FILE',
      message: /broken\.txt\.gz: unreadable gzip/,
    });
    const bad = write(
      'bad.jsonl',
      '{"text":"A first good line."}\n{"text": nope}\n{"text":"A second good line."}\n',
    );
    await t.rejects(buildIndex({ inputs: [bad], out: join(dir, 'x3'), model: MODEL, quiet: true }), {
      code: 'BAD_FILE',
      message: /bad\.jsonl:2: invalid JSON/,
    });
    const skipped = await buildIndex({
      inputs: [bad],
      out: join(dir, 'x4'),
      model: MODEL,
      onBadRecord: 'skip',
      quiet: true,
    });
    t.equal(skipped.counters.bad, 1);
    t.equal(skipped.counters.kept, 2);

    // An interrupted build (state, no manifest) resumed with a model of another dimension.
    const partial = join(dir, 'x5');
    const many = write('many.txt', Array.from({ length: 100 }, (_, i) => syntheticSentence(i)).join('\n'));
    await buildIndex({ inputs: [many], out: partial, model: MODEL, quiet: true, keepEmbeddings: true });
    rmSync(join(partial, 'manifest.json'));
    if (existsSync('models/bge-small-en-v15')) {
      // Same 384-d but another ONNX graph: refused by sha256.
      await t.rejects(
        buildIndex({ inputs: [many], out: partial, model: 'bge-small-en-v15', resume: true, quiet: true }),
        {
          code: 'MODEL_MISMATCH',
        },
      );
    }
    await t.rejects(
      buildIndex({
        inputs: [many],
        out: partial,
        model: 'test/fixtures/tiny-encoder',
        resume: true,
        quiet: true,
      }),
      { code: 'DIM_MISMATCH' },
    );
    await t.rejects(buildIndex({ inputs: [many], out: join(dir, 'small'), model: MODEL, quiet: true }), {
      code: 'CONFLICT',
      message: /already holds a finished index/,
    });
  },
);

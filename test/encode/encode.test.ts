import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import t from 'tap';
import { z } from 'zod';
import { Encoder } from '../../src/encode/index.js';
import { catalogEntry } from '../../src/models/catalog.js';
import { readModelDir } from '../../src/models/dir.js';
import { TextTokenizer } from '../../src/models/runtime.js';

// Fetched by scripts/setup (npm test runs it first); the parity vectors come from sentence-transformers via
// bench/python/reference_embeddings.py.
const MODEL = 'models/all-minilm-l6-v2';
const MODEL_Q = 'models/all-minilm-l6-v2-q';

const Fixture = z.object({
  max_seq_length: z.number(),
  dim: z.number(),
  items: z.array(
    z.object({
      source: z.string(),
      text: z.string(),
      input_ids: z.array(z.number()),
      vector: z.array(z.number()),
    }),
  ),
});
const ref = Fixture.parse(JSON.parse(readFileSync('test/fixtures/reference-embeddings.json', 'utf8')));

function dot(a: Float32Array, i: number, b: ArrayLike<number>, j: number, d: number): number {
  let s = 0;
  for (let k = 0; k < d; k++) s += a[i * d + k]! * b[j * d + k]!;
  return s;
}

function row(v: Float32Array, i: number, d: number): number[] {
  return Array.from(v.subarray(i * d, (i + 1) * d));
}

if (!existsSync(join(MODEL, 'model.onnx'))) {
  t.fail(`${MODEL} is missing: run scripts/setup (paramine models fetch)`);
} else {
  const enc = await Encoder.open(MODEL, { batchSize: 32 });
  t.teardown(() => enc.close());
  const d = enc.dim;

  t.test('the default encoder: 384-d, id and ONNX sha256 for the index manifest', async (t) => {
    t.equal(enc.dim, 384);
    t.equal(enc.modelId, 'all-minilm-l6-v2');
    t.equal(
      enc.onnxSha256,
      catalogEntry('all-minilm-l6-v2')!.extract.find((x) => x.path === 'model.onnx')!.sha256,
    );
    t.equal(enc.maxLength, 256, "sentence-transformers' max_seq_length, not tokenizer.json's 128");
    t.equal(enc.pooling, 'mean');
  });

  t.test('tokenization matches Hugging Face tokenizers, truncation included', async (t) => {
    const tok = new TextTokenizer(await readModelDir(MODEL));
    let same = 0;
    for (const it of ref.items) {
      const ids = Array.from(tok.encode(it.text).ids);
      if (JSON.stringify(ids) === JSON.stringify(it.input_ids)) same++;
      else t.fail(`token ids differ for ${JSON.stringify(it.text.slice(0, 60))}`);
    }
    t.equal(same, ref.items.length);
    t.ok(
      ref.items.filter((x) => x.input_ids.length === 256).length >= 3,
      'the fixture has truncated sentences',
    );
  });

  t.test(
    'parity with sentence-transformers: cosine >= 0.999 for every fixture sentence (fp32)',
    async (t) => {
      t.ok(ref.items.length >= 100, `${ref.items.length} sentences`);
      const sources = new Set(ref.items.map((x) => x.source.replace(/-(val|train)(-longest)?$/, '')));
      t.ok(
        ['parasci-acl', 'multipit-expert', 'mrpc'].every((s) => sources.has(s)),
        'ParaSCI, MultiPIT and MRPC',
      );
      const v = await enc.encode(ref.items.map((x) => x.text));
      const flat = ref.items.flatMap((x) => x.vector);
      let min = 1;
      ref.items.forEach((it, i) => {
        const c = dot(v, i, flat, i, d);
        min = Math.min(min, c);
        if (c < 0.999) t.fail(`cosine ${c.toFixed(5)} for ${JSON.stringify(it.text.slice(0, 60))}`);
      });
      t.ok(min >= 0.999, `min cosine ${min.toFixed(6)}`);
    },
  );

  t.test('output order is the input order, whatever the length sorting does', async (t) => {
    const texts = ref.items.slice(0, 40).map((x) => x.text);
    const all = await enc.encode(texts);
    const order = texts.map((_, i) => i).reverse();
    const shuffled = await enc.encode(order.map((i) => texts[i]!));
    order.forEach((i, k) => {
      t.ok(dot(all, i, shuffled, k, d) > 0.99999, `row ${k} is text ${i}`);
    });
  });

  t.test('a batch of 1 and a padded batch give the same vector', async (t) => {
    const short = 'Short one.';
    const one = await enc.encode([short]);
    t.equal(one.length, d);
    const mixed = await enc.encode([ref.items.find((x) => x.input_ids.length === 256)!.text, short]);
    t.ok(dot(one, 0, mixed, 1, d) > 0.99999, 'padding does not leak into the mean');
  });

  t.test('empty and whitespace strings embed like sentence-transformers does ([CLS] [SEP])', async (t) => {
    const v = await enc.encode(['', '   ', '']);
    const norms = [0, 1, 2].map((i) => Math.sqrt(dot(v, i, v, i, d)));
    for (const n of norms) t.ok(Math.abs(n - 1) < 1e-5, 'unit vector');
    const empty = ref.items.find((x) => x.text === '')!;
    t.ok(dot(v, 0, empty.vector, 0, d) > 0.999);
    t.ok(dot(v, 0, v, 1, d) > 0.99999, 'whitespace only == empty');
    t.same((await enc.encode([])).length, 0);
  });

  t.test('very long texts are truncated at 256 tokens, not rejected', async (t) => {
    const head = ref.items.find((x) => x.input_ids.length === 256)!.text;
    const huge = `${head} ${'and then it went on and on '.repeat(5000)}`; // ~30k words
    const v = await enc.encode([head, huge, 'x'.repeat(50_000)]);
    t.ok(dot(v, 0, v, 1, d) > 0.99999, 'text past the limit does not change the vector');
    t.ok(Math.abs(Math.sqrt(dot(v, 2, v, 2, d)) - 1) < 1e-5);
  });

  t.test('a batch of 1000 and concurrent calls', async (t) => {
    const base = ref.items.slice(0, 100).map((x) => x.text.slice(0, 80));
    const texts = Array.from({ length: 1000 }, (_, i) => `${base[i % 100]} (${Math.floor(i / 100)})`);
    const [v, w] = await Promise.all([enc.encode(texts), enc.encode(texts.slice(0, 5))]);
    t.equal(v.length, 1000 * d);
    for (const i of [0, 5, 999]) {
      const single = await enc.encode([texts[i]!]);
      t.ok(dot(v, i, single, 0, d) > 0.99999, `row ${i} == its own encode`);
    }
    t.ok(dot(v, 3, w, 3, d) > 0.99999, 'the concurrent call got its own rows');
    t.ok(row(v, 0, d).every(Number.isFinite));
  });

  t.test('inference does not block the event loop (it runs in a worker)', async (t) => {
    // Big batches make a blocked loop obvious: on the calling thread a batch of 128 stalls it ~0.5-1 s.
    const big = await Encoder.open(MODEL, { batchSize: 128 });
    t.teardown(() => big.close());
    const texts = ref.items
      .slice(0, 96)
      .flatMap((x) => [x.text, `${x.text} again`, `also ${x.text}`, `${x.text}!`]);
    const h = monitorEventLoopDelay({ resolution: 10 });
    h.enable();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    await big.encode(texts);
    clearInterval(timer);
    h.disable();
    const p50 = h.percentile(50) / 1e6;
    t.ok(ticks > 20, `timers ran ${ticks} times during the encode`);
    t.ok(p50 < 100, `median event-loop delay ${p50.toFixed(0)} ms (max ${(h.max / 1e6).toFixed(0)} ms)`);
  });

  t.test('bad input is BAD_INPUT naming the element', async (t) => {
    await t.rejects(enc.encode(['ok', 3 as unknown as string]), { code: 'BAD_INPUT', field: 'texts[1]' });
  });

  t.test('pooling follows 1_Pooling/config.json; mean when it is absent', async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'paramine-enc-'));
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    const link = (dir: string, files: string[]) => {
      mkdirSync(dir, { recursive: true });
      for (const f of files) symlinkSync(resolve(MODEL, f), join(dir, f));
    };
    const files = [
      'config.json',
      'tokenizer.json',
      'tokenizer_config.json',
      'model.onnx',
      'sentence_bert_config.json',
    ];
    link(join(root, 'nopool'), files);
    link(join(root, 'cls'), files);
    mkdirSync(join(root, 'cls/1_Pooling'));
    writeFileSync(join(root, 'cls/1_Pooling/config.json'), JSON.stringify({ pooling_mode_cls_token: true }));
    const texts = ['The cat sat on the mat.', 'Stocks fell on Monday.'];
    const mean = await enc.encode(texts);
    const nopool = await Encoder.open(join(root, 'nopool'), { worker: false });
    const cls = await Encoder.open(join(root, 'cls'), { worker: false });
    t.teardown(async () => {
      await nopool.close();
      await cls.close();
    });
    t.equal(nopool.pooling, 'mean');
    t.equal(cls.pooling, 'cls');
    const a = await nopool.encode(texts);
    const c = await cls.encode(texts);
    t.ok(dot(a, 1, mean, 1, d) > 0.99999, 'no pooling config: mean');
    t.ok(dot(c, 0, mean, 0, d) < 0.99, 'CLS pooling gives a different vector');
    t.ok(Math.abs(Math.sqrt(dot(c, 0, c, 0, d)) - 1) < 1e-5, 'and normalizes it');
  });

  t.test('the int8 model loads by variant and stays close to sentence-transformers fp32', async (t) => {
    if (!existsSync(MODEL_Q)) return t.fail(`${MODEL_Q} is missing: run scripts/setup`);
    const q = await Encoder.open(MODEL_Q, { worker: false });
    t.teardown(() => q.close());
    t.equal(q.onnxFile, join('onnx', 'model_quantized.onnx'));
    const items = ref.items.slice(0, 60);
    const v = await q.encode(items.map((x) => x.text));
    const flat = items.flatMap((x) => x.vector);
    const cos = items.map((_, i) => dot(v, i, flat, i, d));
    // Quantization costs accuracy (distribution in BENCHMARKS.md); this bound only catches a broken path.
    t.ok(Math.min(...cos) > 0.95, `int8 min cosine ${Math.min(...cos).toFixed(4)}`);
  });

  t.test('a closed encoder refuses work', async (t) => {
    for (const worker of [true, false]) {
      const e = await Encoder.open(MODEL, { worker });
      await e.close();
      await t.rejects(e.encode(['x']), { code: 'UNAVAILABLE' }, worker ? 'worker' : 'inline');
      await e.close();
    }
  });

  t.test('a model directory missing its tokenizer is MODEL_MISSING_FILE', async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'paramine-enc-'));
    t.teardown(() => rmSync(root, { recursive: true, force: true }));
    cpSync(join(MODEL, 'config.json'), join(root, 'config.json'));
    await t.rejects(
      Encoder.open(root),
      { code: 'MODEL_MISSING_FILE', field: 'tokenizer.json' },
      'from the worker',
    );
    await t.rejects(Encoder.open(root, { worker: false }), {
      code: 'MODEL_MISSING_FILE',
      field: 'tokenizer.json',
    });
  });
}

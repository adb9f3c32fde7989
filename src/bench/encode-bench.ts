/**
 * Encoder and cross-encoder speed: `npm run bench:encode [-- --n 1024 --threads 2 --out FILE]`.
 *
 * On the same ParaSCI sentences and the same length-sorted batches it times: our Encoder end to end (fp32 and
 * int8), a bare `session.run` over pre-built tensors (the ceiling: what tokenizing, padding, pooling and
 * copying cost us is the gap), tokenization alone, sentence-transformers on PyTorch (the venv's python,
 * torch.set_num_threads = --threads) and the cross-encoder's pairs/s. Prints a Markdown table; --out writes
 * the JSON result.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as ort from 'onnxruntime-node';
import { z } from 'zod';
import { Encoder } from '../encode/encoder.js';
import { ModelRuntime } from '../models/runtime.js';
import { CrossEncoder } from '../rerank/cross-encoder.js';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '1024' },
    threads: { type: 'string', default: '2' },
    batches: { type: 'string', default: '32,64,128' },
    data: { type: 'string', default: '../shared/data' },
    models: { type: 'string', default: 'models' },
    python: { type: 'string', default: process.env.PARAMINE_PYTHON ?? '.venv/bin/python' },
    'no-python': { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});

const N = Number(args.n);
const THREADS = Number(args.threads);
const BATCHES = args.batches.split(',').map(Number);
const FP32 = join(args.models, 'all-minilm-l6-v2');
const INT8 = join(args.models, 'all-minilm-l6-v2-q');
const RERANKER = join(args.models, 'paramine-paraphrase-minilm');
const TINY = 'test/fixtures/tiny-turku';

function loadSentences(): { src: string[]; tgt: string[] } {
  const dir = join(args.data, 'parasci', 'acl');
  if (!existsSync(join(dir, 'val.src'))) {
    throw new Error(`ParaSCI not found under ${resolve(dir)}: pass --data DIR (the shared data folder)`);
  }
  const read = (f: string) => readFileSync(join(dir, f), 'utf8').split('\n');
  const src = read('val.src');
  const tgt = read('val.tgt');
  const keep = src.map((_, i) => i).filter((i) => src[i]!.trim() && tgt[i]?.trim());
  return { src: keep.slice(0, N).map((i) => src[i]!), tgt: keep.slice(0, N).map((i) => tgt[i]!) };
}

const now = () => performance.now();

interface Contender {
  name: string;
  run: () => Promise<unknown>;
  close: () => Promise<void>;
}

/**
 * Sentences/s of each contender: one warm-up each, then `rounds` rounds in which every contender runs once,
 * keeping each one's best. Interleaving spreads whatever else the shared box is doing over all of them.
 */
async function race(contenders: Contender[], n: number, rounds = 3): Promise<Record<string, number>> {
  for (const c of contenders) await c.run();
  const best: Record<string, number> = {};
  for (let r = 0; r < rounds; r++) {
    for (const c of contenders) {
      const t = now();
      await c.run();
      best[c.name] = Math.max(best[c.name] ?? 0, n / ((now() - t) / 1000));
    }
  }
  for (const c of contenders) await c.close();
  return best;
}

/** The real path: Encoder in its worker thread, texts in, normalized vectors out. */
async function ours(
  name: string,
  dir: string,
  texts: string[],
  batch: number,
  spinning = true,
): Promise<Contender> {
  const enc = await Encoder.open(dir, { threads: THREADS, batchSize: batch, spinning });
  return { name, run: () => enc.encode(texts), close: () => enc.close() };
}

/** session.run alone on the tensors our runtime would build, in the same batches, on this thread. */
async function bare(name: string, dir: string, texts: string[], batch: number): Promise<Contender> {
  const rt = await ModelRuntime.open(dir, { threads: THREADS, batchSize: batch });
  const encoded = texts.map((t) => rt.tokenizer.encode(t));
  const feeds = rt.plan(encoded).map((rows) => rt.build(encoded, rows).feeds);
  await rt.close();
  const session = await ort.InferenceSession.create(rt.modelDir.onnxPath, {
    intraOpNumThreads: THREADS,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  return {
    name,
    run: async () => {
      for (const f of feeds) await session.run(f);
    },
    close: () => session.release(),
  };
}

async function tokenizeRate(texts: string[]): Promise<number> {
  const rt = await ModelRuntime.open(FP32, { threads: 1 });
  try {
    const t0 = now();
    for (let r = 0; r < 3; r++) for (const t of texts) rt.tokenizer.encode(t);
    return (3 * texts.length) / ((now() - t0) / 1000);
  } finally {
    await rt.close();
  }
}

const StResult = z.object({
  sentence_transformers: z.string(),
  torch: z.string(),
  threads: z.number(),
  results: z.array(z.object({ batch: z.number(), sentences_per_s: z.number() })),
});

function sentenceTransformers(texts: string[]): z.infer<typeof StResult> | string {
  if (args['no-python']) return 'skipped (--no-python)';
  if (!existsSync(args.python)) return `skipped: no python at ${args.python} (set PARAMINE_PYTHON)`;
  const dir = mkdtempSync(join(tmpdir(), 'paramine-bench-'));
  try {
    const file = join(dir, 'sentences.txt');
    writeFileSync(file, `${texts.join('\n')}\n`);
    const r = spawnSync(
      args.python,
      [
        'scripts/reference_embeddings.py',
        '--bench',
        file,
        '--batch-sizes',
        BATCHES.join(','),
        '--threads',
        String(THREADS),
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 24 },
    );
    if (r.status !== 0) return `failed: ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' ')}`;
    const line = r.stdout.trim().split('\n').pop() ?? '';
    return StResult.parse(JSON.parse(line));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function cosine(a: Float32Array, b: Float32Array, i: number, d: number): number {
  let s = 0;
  for (let k = 0; k < d; k++) s += a[i * d + k]! * b[i * d + k]!;
  return s;
}

function quantiles(xs: number[]): { min: number; p5: number; median: number; mean: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { min: s[0]!, p5: at(0.05), median: at(0.5), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

async function int8Agreement(texts: string[]) {
  const e32 = await Encoder.open(FP32, { threads: THREADS });
  const e8 = await Encoder.open(INT8, { threads: THREADS });
  try {
    const [a, b] = [await e32.encode(texts), await e8.encode(texts)];
    const vsOurs = quantiles(texts.map((_, i) => cosine(a, b, i, e32.dim)));
    // Against sentence-transformers' own vectors (the parity fixture).
    const Ref = z.object({ items: z.array(z.object({ text: z.string(), vector: z.array(z.number()) })) });
    const ref = Ref.parse(JSON.parse(readFileSync('test/fixtures/reference-embeddings.json', 'utf8')));
    const q = await e8.encode(ref.items.map((x) => x.text));
    const r = Float32Array.from(ref.items.flatMap((x) => x.vector));
    const vsST = quantiles(ref.items.map((_, i) => cosine(q, r, i, e8.dim)));
    return { vsOursFp32: vsOurs, vsSentenceTransformers: vsST, nST: ref.items.length };
  } finally {
    await e32.close();
    await e8.close();
  }
}

async function crossEncoder(src: string[], tgt: string[]) {
  let dir = RERANKER;
  let note = 'models/paramine-paraphrase-minilm';
  try {
    await (await CrossEncoder.open(dir)).close();
  } catch {
    dir = TINY;
    note =
      'tiny-turku fixture (models/paramine-paraphrase-minilm not there yet): measures the path, not a real model';
  }
  const pairs = src.map((s, i) => [s, tgt[i]!] as const);
  const ce = await CrossEncoder.open(dir, { threads: THREADS, batchSize: 32 });
  const { labels, maxLength } = ce;
  const r = await race([{ name: 'ce', run: () => ce.score(pairs), close: () => ce.close() }], pairs.length);
  return { model: note, labels, maxLength, pairsPerS: r.ce ?? Number.NaN };
}

async function main() {
  const { src, tgt } = loadSentences();
  const texts = src;
  const rows: Array<Record<string, number>> = [];
  let spinOff = Number.NaN;
  process.stderr.write(`encode bench: ${texts.length} ParaSCI sentences, ${THREADS} threads\n`);
  const st = sentenceTransformers(texts);
  const int8 = existsSync(INT8);
  for (const b of BATCHES) {
    process.stderr.write(`  batch ${b}\n`);
    const contenders = [await ours('oursFp32', FP32, texts, b), await bare('bareFp32', FP32, texts, b)];
    if (int8) contenders.push(await ours('oursInt8', INT8, texts, b), await bare('bareInt8', INT8, texts, b));
    if (b === BATCHES[0]) contenders.push(await ours('oursFp32SpinOff', FP32, texts, b, false));
    const r = await race(contenders, texts.length);
    const theirs =
      typeof st === 'string'
        ? Number.NaN
        : (st.results.find((x) => x.batch === b)?.sentences_per_s ?? Number.NaN);
    rows.push({
      batch: b,
      oursFp32: r.oursFp32 ?? Number.NaN,
      bareFp32: r.bareFp32 ?? Number.NaN,
      oursInt8: r.oursInt8 ?? Number.NaN,
      bareInt8: r.bareInt8 ?? Number.NaN,
      st: theirs,
    });
    if (r.oursFp32SpinOff !== undefined) spinOff = r.oursFp32SpinOff;
  }
  const tokenize = await tokenizeRate(texts);
  const agreement = existsSync(INT8) ? await int8Agreement(texts) : undefined;
  const ce = await crossEncoder(src, tgt);

  const f = (x: unknown) => (typeof x === 'number' ? (Number.isNaN(x) ? 'n/a' : x.toFixed(0)) : String(x));
  const r2 = (x: number) => (Number.isNaN(x) ? 'n/a' : `${x.toFixed(2)}×`);
  const lines = [
    `sentences: ${texts.length} ParaSCI-ACL val; threads: ${THREADS}; sentence-transformers: ${
      typeof st === 'string' ? st : `${st.sentence_transformers}, torch ${st.torch} (${st.threads} threads)`
    }`,
    '',
    '| batch | ours fp32 | bare run fp32 | ours/bare | ours int8 | bare run int8 | ours/bare | sentence-transformers fp32 | ours fp32 / ST | ours int8 / ST |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => {
      const n = (k: string) => r[k] ?? Number.NaN;
      const ratio = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(2));
      return `| ${r.batch} | ${f(r.oursFp32)} | ${f(r.bareFp32)} | ${ratio(n('oursFp32') / n('bareFp32'))} | ${f(r.oursInt8)} | ${f(r.bareInt8)} | ${ratio(n('oursInt8') / n('bareInt8'))} | ${f(r.st)} | ${r2(n('oursFp32') / n('st'))} | ${r2(n('oursInt8') / n('st'))} |`;
    }),
    '',
    `tokenization alone: ${f(tokenize)} sentences/s (one thread)`,
    `ours fp32, batch ${BATCHES[0]}, ORT thread spinning off: ${f(spinOff)} sentences/s (on: ${f(rows[0]?.oursFp32)})`,
    ...(agreement
      ? [
          `int8 vs sentence-transformers fp32 (${agreement.nST} fixture sentences): cosine min ${agreement.vsSentenceTransformers.min.toFixed(4)}, p5 ${agreement.vsSentenceTransformers.p5.toFixed(4)}, median ${agreement.vsSentenceTransformers.median.toFixed(4)}, mean ${agreement.vsSentenceTransformers.mean.toFixed(4)}`,
          `int8 vs our fp32 (${texts.length} bench sentences): cosine min ${agreement.vsOursFp32.min.toFixed(4)}, p5 ${agreement.vsOursFp32.p5.toFixed(4)}, median ${agreement.vsOursFp32.median.toFixed(4)}, mean ${agreement.vsOursFp32.mean.toFixed(4)}`,
        ]
      : []),
    `cross-encoder: ${f(ce.pairsPerS)} pairs/s, batch 32, max length ${ce.maxLength}, ${ce.labels.length} labels — ${ce.model}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (args.out) {
    const result = {
      spinOff,
      tokenize,
      sentences: texts.length,
      threads: THREADS,
      rows,
      sentenceTransformers: st,
      int8: agreement,
      crossEncoder: ce,
    };
    writeFileSync(args.out, `${JSON.stringify(result, null, 2)}\n`);
  }
}

await main();

/**
 * Encoder and cross-encoder speed: `paramine bench encode [--n 1024 --threads 2 --json FILE]`.
 *
 * On the same ParaSCI sentences and the same length-sorted batches it times: our Encoder end to end (fp32 and
 * int8), a bare `session.run` over pre-built tensors (the ceiling: what tokenizing, padding, pooling and
 * copying cost us is the gap), tokenization alone, sentence-transformers on PyTorch (the venv's python,
 * torch.set_num_threads = --threads) and the cross-encoder's pairs/s.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { defineBenchmark, type Log } from '../../dist/bench/harness.js';
import { Encoder } from '../../dist/encode/encoder.js';
import { env } from '../../dist/env.js';
import { ModelRuntime } from '../../dist/models/runtime.js';
import { CrossEncoder } from '../../dist/rerank/cross-encoder.js';
import { DEFAULT_RERANKER } from '../../dist/service/index.js';
import { sentenceTransformers } from './reference.js';

const encodeSchema = z.object({
  n: z.coerce.number().int().min(1),
  threads: z.coerce.number().int().min(1),
  batches: z.string().transform((s) => s.split(',').map((x) => z.coerce.number().int().min(1).parse(x))),
  data: z.string(),
  models: z.string(),
  /** false with --no-python. */
  python: z.union([z.string().min(1), z.literal(false)]),
});
type EncodeOptions = z.output<typeof encodeSchema>;

const TINY = 'test/fixtures/tiny-turku';

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
      const t = performance.now();
      await c.run();
      best[c.name] = Math.max(best[c.name] ?? 0, n / ((performance.now() - t) / 1000));
    }
  }
  for (const c of contenders) await c.close();
  return best;
}

function loadSentences(o: EncodeOptions): { src: string[]; tgt: string[] } {
  const dir = join(o.data, 'parasci', 'acl');
  if (!existsSync(join(dir, 'val.src'))) {
    throw new Error(`ParaSCI not found under ${resolve(dir)}: pass --data DIR (the shared data folder)`);
  }
  const read = (f: string) => readFileSync(join(dir, f), 'utf8').split('\n');
  const src = read('val.src');
  const tgt = read('val.tgt');
  const keep = src.map((_, i) => i).filter((i) => src[i]!.trim() && tgt[i]?.trim());
  return { src: keep.slice(0, o.n).map((i) => src[i]!), tgt: keep.slice(0, o.n).map((i) => tgt[i]!) };
}

/** The real path: Encoder in its worker thread, texts in, normalized vectors out. */
async function ours(
  name: string,
  dir: string,
  texts: string[],
  batch: number,
  threads: number,
  spinning = true,
) {
  const enc = await Encoder.open(dir, { threads, batchSize: batch, spinning });
  return { name, run: () => enc.encode(texts), close: () => enc.close() } satisfies Contender;
}

/** session.run alone on the tensors our runtime would build, in the same batches, on this thread. */
async function bare(
  name: string,
  dir: string,
  texts: string[],
  batch: number,
  threads: number,
): Promise<Contender> {
  const ort = await import('onnxruntime-node');
  const rt = await ModelRuntime.open(dir, { threads, batchSize: batch });
  const encoded = texts.map((t) => rt.tokenizer.encode(t));
  const feeds = rt.plan(encoded).map((rows) => rt.build(encoded, rows).feeds);
  await rt.close();
  const session = await ort.InferenceSession.create(rt.modelDir.onnxPath, {
    intraOpNumThreads: threads,
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

async function tokenizeRate(dir: string, texts: string[]): Promise<number> {
  const rt = await ModelRuntime.open(dir, { threads: 1 });
  try {
    const t0 = performance.now();
    for (let r = 0; r < 3; r++) for (const t of texts) rt.tokenizer.encode(t);
    return (3 * texts.length) / ((performance.now() - t0) / 1000);
  } finally {
    await rt.close();
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

const referenceSchema = z.object({
  items: z.array(z.object({ text: z.string(), vector: z.array(z.number()) })),
});

/** How close int8 vectors are to our fp32 ones and to sentence-transformers' own (the parity fixture). */
async function int8Agreement(fp32: string, int8: string, texts: string[], threads: number) {
  const e32 = await Encoder.open(fp32, { threads });
  const e8 = await Encoder.open(int8, { threads });
  try {
    const [a, b] = [await e32.encode(texts), await e8.encode(texts)];
    const vsOurs = quantiles(texts.map((_, i) => cosine(a, b, i, e32.dim)));
    const ref = referenceSchema.parse(
      JSON.parse(readFileSync('test/fixtures/reference-embeddings.json', 'utf8')),
    );
    const q = await e8.encode(ref.items.map((x) => x.text));
    const r = Float32Array.from(ref.items.flatMap((x) => x.vector));
    const vsST = quantiles(ref.items.map((_, i) => cosine(q, r, i, e8.dim)));
    return { vsOursFp32: vsOurs, vsSentenceTransformers: vsST, nST: ref.items.length };
  } finally {
    await e32.close();
    await e8.close();
  }
}

async function crossEncoder(models: string, src: string[], tgt: string[], threads: number) {
  let dir = join(models, DEFAULT_RERANKER);
  let note = `models/${DEFAULT_RERANKER}`;
  try {
    await (await CrossEncoder.open(dir)).close();
  } catch {
    dir = TINY;
    note = `tiny-turku fixture (models/${DEFAULT_RERANKER} not there yet): measures the path, not a real model`;
  }
  const pairs = src.map((s, i) => [s, tgt[i]!] as const);
  const ce = await CrossEncoder.open(dir, { threads, batchSize: 32 });
  const { labels, maxLength } = ce;
  const r = await race([{ name: 'ce', run: () => ce.score(pairs), close: () => ce.close() }], pairs.length);
  return { model: note, labels, maxLength, pairsPerS: r.ce ?? Number.NaN };
}

export interface EncodeRow {
  batch: number;
  oursFp32: number;
  bareFp32: number;
  oursInt8: number;
  bareInt8: number;
  st: number;
}

/** Every contender at every batch size, interleaved; the first batch size also without ORT spinning. */
async function encodeRates(o: EncodeOptions, texts: string[], stRate: (batch: number) => number, log: Log) {
  const fp32 = join(o.models, 'all-minilm-l6-v2');
  const int8 = join(o.models, 'all-minilm-l6-v2-q');
  const rows: EncodeRow[] = [];
  let spinOff = Number.NaN;
  for (const b of o.batches) {
    log(`batch ${b}`);
    const contenders = [
      await ours('oursFp32', fp32, texts, b, o.threads),
      await bare('bareFp32', fp32, texts, b, o.threads),
    ];
    if (existsSync(int8))
      contenders.push(
        await ours('oursInt8', int8, texts, b, o.threads),
        await bare('bareInt8', int8, texts, b, o.threads),
      );
    if (b === o.batches[0]) contenders.push(await ours('oursFp32SpinOff', fp32, texts, b, o.threads, false));
    const r = await race(contenders, texts.length);
    const at = (k: string) => r[k] ?? Number.NaN;
    rows.push({
      batch: b,
      oursFp32: at('oursFp32'),
      bareFp32: at('bareFp32'),
      oursInt8: at('oursInt8'),
      bareInt8: at('bareInt8'),
      st: stRate(b),
    });
    if (r.oursFp32SpinOff !== undefined) spinOff = r.oursFp32SpinOff;
  }
  return { rows, spinOff };
}

async function encodeBenchmark(o: EncodeOptions, log: Log) {
  const { src, tgt } = loadSentences(o);
  log(`${src.length} ParaSCI sentences, ${o.threads} threads`);
  const st =
    o.python === false ? 'skipped (--no-python)' : sentenceTransformers(o.python, src, o.batches, o.threads);
  const stRate = (b: number) =>
    typeof st === 'string'
      ? Number.NaN
      : (st.results.find((x) => x.batch === b)?.sentences_per_s ?? Number.NaN);
  const { rows, spinOff } = await encodeRates(o, src, stRate, log);
  const fp32 = join(o.models, 'all-minilm-l6-v2');
  const int8 = join(o.models, 'all-minilm-l6-v2-q');
  const tokenize = await tokenizeRate(fp32, src);
  const agreement = existsSync(int8) ? await int8Agreement(fp32, int8, src, o.threads) : undefined;
  const ce = await crossEncoder(o.models, src, tgt, o.threads);
  return {
    spinOff,
    tokenize,
    sentences: src.length,
    threads: o.threads,
    rows,
    sentenceTransformers: st,
    int8: agreement,
    crossEncoder: ce,
  };
}
export type EncodeResult = Awaited<ReturnType<typeof encodeBenchmark>>;

export const encode = defineBenchmark({
  name: 'encode',
  description: 'encoder and cross-encoder sentences/s against a bare session.run and sentence-transformers',
  outIsJson: true,
  options: (cmd) =>
    cmd
      .option('--n <n>', 'ParaSCI-ACL val sentences', '1024')
      .option('--threads <n>', 'intra-op threads (and torch threads)', '2')
      .option('--batches <list>', 'batch sizes', '32,64,128')
      .option('--data <dir>', 'the shared data folder', '../shared/data')
      .option('--models <dir>', 'where all-minilm-l6-v2(-q) and the cross-encoder are', 'models')
      .option(
        '--python <path>',
        'python with sentence-transformers',
        env('PARAMINE_PYTHON') ?? '.venv/bin/python',
      )
      .option('--no-python', 'skip sentence-transformers'),
  schema: encodeSchema,
  async run(o, log) {
    const result = await encodeBenchmark(o, log);
    return { result, markdown: encodeMarkdown(result) };
  },
});

/** The encoder benchmark's Markdown: one row per batch size, then the single figures. */

const f = (x: unknown) => (typeof x === 'number' ? (Number.isNaN(x) ? 'n/a' : x.toFixed(0)) : String(x));
const times = (x: number) => (Number.isNaN(x) ? 'n/a' : `${x.toFixed(2)}×`);
const ratio = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(2));

function row(r: EncodeRow): string {
  return (
    `| ${r.batch} | ${f(r.oursFp32)} | ${f(r.bareFp32)} | ${ratio(r.oursFp32 / r.bareFp32)} | ${f(r.oursInt8)} | ` +
    `${f(r.bareInt8)} | ${ratio(r.oursInt8 / r.bareInt8)} | ${f(r.st)} | ${times(r.oursFp32 / r.st)} | ${times(r.oursInt8 / r.st)} |`
  );
}

type Quantiles = { min: number; p5: number; median: number; mean: number };
const cosines = (q: Quantiles) =>
  `cosine min ${q.min.toFixed(4)}, p5 ${q.p5.toFixed(4)}, median ${q.median.toFixed(4)}, mean ${q.mean.toFixed(4)}`;

export function encodeMarkdown(r: EncodeResult): string {
  const st = r.sentenceTransformers;
  const stName =
    typeof st === 'string' ? st : `${st.sentence_transformers}, torch ${st.torch} (${st.threads} threads)`;
  const lines = [
    `sentences: ${r.sentences} ParaSCI-ACL val; threads: ${r.threads}; sentence-transformers: ${stName}`,
    '',
    '| batch | ours fp32 | bare run fp32 | ours/bare | ours int8 | bare run int8 | ours/bare | sentence-transformers fp32 | ours fp32 / ST | ours int8 / ST |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...r.rows.map(row),
    '',
    `tokenization alone: ${f(r.tokenize)} sentences/s (one thread)`,
    `ours fp32, batch ${r.rows[0]?.batch}, ORT thread spinning off: ${f(r.spinOff)} sentences/s (on: ${f(r.rows[0]?.oursFp32)})`,
    ...(r.int8
      ? [
          `int8 vs sentence-transformers fp32 (${r.int8.nST} fixture sentences): ${cosines(r.int8.vsSentenceTransformers)}`,
          `int8 vs our fp32 (${r.sentences} bench sentences): ${cosines(r.int8.vsOursFp32)}`,
        ]
      : []),
    `cross-encoder: ${f(r.crossEncoder.pairsPerS)} pairs/s, batch 32, max length ${r.crossEncoder.maxLength}, ${r.crossEncoder.labels.length} labels — ${r.crossEncoder.model}`,
  ];
  return `${lines.join('\n')}\n`;
}

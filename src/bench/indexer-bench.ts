/**
 * `paramine bench indexer`: the whole offline build against the encoder alone on the same sentences, in
 * one invocation (the aim: build <= 1.1x encoder time), plus the build's peak RSS and index bytes per
 * sentence. Sentences: ParaSCI-ACL train (both sides) then MultiPIT_Auto train (both sides) from
 * ../shared/data.
 *
 *   paramine bench indexer --n 100000 [--factory auto] [--json out.json]
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { CORPUS_FORMATS } from '../corpus/index.js';
import { Encoder } from '../encode/index.js';
import { readManifest } from '../index/index.js';
import { resolveModelDir } from '../models/resolve.js';
import { STORE_DIR } from '../store/index.js';
import { runCli } from './child.js';
import { defineBenchmark, type Log } from './harness.js';
import { benchSentences } from './sample-sentences.js';

const MIB = 2 ** 20;

function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return total;
}

const indexerSchema = z.object({
  input: z.array(z.string().min(1)).default([]),
  format: z.enum(CORPUS_FORMATS).optional(),
  n: z.coerce.number().int().min(1),
  model: z.string().min(1),
  factory: z.string().min(1),
  batch: z.coerce.number().int().min(1),
});
type IndexerOptions = z.output<typeof indexerSchema>;

/** The reference: the encoder alone, same sentences, same batch size, in this process. */
async function encoderSeconds(o: IndexerOptions, texts: readonly string[]): Promise<number> {
  const encoder = await Encoder.open(resolveModelDir(o.model));
  try {
    const t0 = performance.now();
    for (let i = 0; i < texts.length; i += o.batch) await encoder.encode(texts.slice(i, i + o.batch));
    return (performance.now() - t0) / 1000;
  } finally {
    await encoder.close();
  }
}

async function indexerBenchmark(o: IndexerOptions, log: Log) {
  const { texts, from } = await benchSentences(o.input, o.n, o.format);
  log(`${texts.length} sentences from ${from}`);
  const dir = mkdtempSync(join(tmpdir(), 'paramine-bench-indexer-'));
  try {
    const corpus = join(dir, 'corpus.txt');
    writeFileSync(corpus, `${texts.join('\n')}\n`);
    log(`encoder alone on ${texts.length} sentences`);
    const encoderS = await encoderSeconds(o, texts);
    // The build, as a user runs it, in a child process so its peak RSS is its own.
    log('the whole build: paramine index');
    const out = join(dir, 'index');
    const build = runCli([
      ...['index', '--input', corpus, '--out', out, '--model', o.model, '--factory', o.factory],
      ...['--encode-batch', String(o.batch), '--quiet'],
    ]);
    const manifest = await readManifest(out);
    const shardBytes = manifest.shards.reduce((s, x) => s + statSync(join(out, x.file)).size, 0);
    return {
      sentences: manifest.ntotal,
      factory: manifest.factory,
      encoder_s: encoderS,
      encoder_sentences_per_s: texts.length / encoderS,
      build_s: build.wall_s,
      build_sentences_per_s: manifest.ntotal / build.wall_s,
      build_over_encoder: build.wall_s / encoderS,
      peak_rss_mib: Math.round(build.max_rss_bytes / MIB),
      index_bytes_per_sentence: shardBytes / manifest.ntotal,
      store_bytes_per_sentence: dirBytes(join(out, STORE_DIR)) / manifest.ntotal,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function indexerMarkdown(r: Awaited<ReturnType<typeof indexerBenchmark>>): string {
  return [
    '| sentences | factory | encoder alone | whole build | build / encoder | peak RSS | index B/sent | store B/sent |',
    '|---:|---|---:|---:|---:|---:|---:|---:|',
    `| ${r.sentences} | ${r.factory} | ${r.encoder_s.toFixed(1)} s (${r.encoder_sentences_per_s.toFixed(0)}/s) | ` +
      `${r.build_s.toFixed(1)} s (${r.build_sentences_per_s.toFixed(0)}/s) | ${r.build_over_encoder.toFixed(2)} | ` +
      `${r.peak_rss_mib} MiB | ${r.index_bytes_per_sentence.toFixed(0)} | ${r.store_bytes_per_sentence.toFixed(0)} |`,
    '',
  ].join('\n');
}

export const indexer = defineBenchmark({
  name: 'indexer',
  description: 'the whole offline build against the encoder alone on the same sentences; peak RSS, bytes',
  options: (cmd) =>
    cmd
      .option('--input <files...>', 'your corpus (default: the demo corpus, examples/demo-corpus.jsonl)')
      .option('--format <format>', "the input's format, where its extension does not say it")
      .option('--n <n>', 'sentences (the first n distinct ones)', '100000')
      .option('--model <name>', 'encoder', 'all-minilm-l6-v2')
      .option('--factory <str>', 'factory string', 'auto')
      .option('--batch <n>', 'encoder batch', '256'),
  schema: indexerSchema,
  async run(o, log) {
    const result = await indexerBenchmark(o, log);
    return { result, markdown: indexerMarkdown(result) };
  },
});

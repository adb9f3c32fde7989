/**
 * `npm run bench:indexer`: the whole offline build against the encoder alone on the same sentences, in
 * one invocation (DESIGN aim: build <= 1.1x encoder time), plus peak RSS and index bytes per sentence.
 * Sentences: ParaSCI-ACL train (both sides) then MultiPIT_Auto train (both sides) from ../shared/data.
 *
 *   npm run bench:indexer -- --n 100000 [--factory auto] [--json out.json]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { Encoder } from '../encode/index.js';
import { resolveModelDir } from '../models/resolve.js';
import { sampleSentences } from './sample-sentences.js';

function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return total;
}

async function main(): Promise<void> {
  const o = new Command()
    .option('--n <n>', 'sentences', '100000')
    .option('--model <name>', 'encoder', 'all-minilm-l6-v2')
    .option('--factory <str>', 'factory string', 'auto')
    .option('--batch <n>', 'encoder batch', '256')
    .option('--json <path>', 'write results as JSON')
    .parse()
    .opts<{ n: string; model: string; factory: string; batch: string; json?: string }>();
  const n = Number(o.n);
  const batch = Number(o.batch);
  const texts = await sampleSentences(n);
  const dir = mkdtempSync(join(tmpdir(), 'paramine-bench-indexer-'));
  try {
    const corpus = join(dir, 'corpus.txt');
    writeFileSync(corpus, `${texts.join('\n')}\n`);

    // Reference: the encoder alone, same sentences, same batch size, in this process.
    const encoder = await Encoder.open(resolveModelDir(o.model));
    const t0 = performance.now();
    for (let i = 0; i < texts.length; i += batch) await encoder.encode(texts.slice(i, i + batch));
    const encoderS = (performance.now() - t0) / 1000;
    await encoder.close();

    // The build, as a user runs it, in a child process so its peak RSS is its own.
    const out = join(dir, 'index');
    const t1 = performance.now();
    const summary = execFileSync(
      process.execPath,
      [
        'dist/cli.js',
        'index',
        '--input',
        corpus,
        '--out',
        out,
        '--model',
        o.model,
        '--factory',
        o.factory,
        '--encode-batch',
        String(batch),
        '--quiet',
      ],
      { encoding: 'utf8' },
    );
    const buildS = (performance.now() - t1) / 1000;
    const rss = Number(/peak RSS (\d+) MiB/.exec(summary)?.[1] ?? Number.NaN);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as {
      factory: string;
      ntotal: number;
    };
    const shardBytes = readdirSync(out)
      .filter((f) => f.endsWith('.faiss'))
      .reduce((s, f) => s + statSync(join(out, f)).size, 0);
    const storeBytes = dirBytes(join(out, 'store'));
    const result = {
      sentences: manifest.ntotal,
      factory: manifest.factory,
      encoder_s: encoderS,
      encoder_sentences_per_s: texts.length / encoderS,
      build_s: buildS,
      build_sentences_per_s: manifest.ntotal / buildS,
      build_over_encoder: buildS / encoderS,
      peak_rss_mib: rss,
      index_bytes_per_sentence: shardBytes / manifest.ntotal,
      store_bytes_per_sentence: storeBytes / manifest.ntotal,
    };
    process.stdout.write(
      [
        `| sentences | factory | encoder alone | whole build | build / encoder | peak RSS | index B/sent | store B/sent |`,
        `|---:|---|---:|---:|---:|---:|---:|---:|`,
        `| ${result.sentences} | ${result.factory} | ${encoderS.toFixed(1)} s (${result.encoder_sentences_per_s.toFixed(0)}/s) | ` +
          `${buildS.toFixed(1)} s (${result.build_sentences_per_s.toFixed(0)}/s) | ${result.build_over_encoder.toFixed(2)} | ` +
          `${rss} MiB | ${result.index_bytes_per_sentence.toFixed(0)} | ${result.store_bytes_per_sentence.toFixed(0)} |`,
        '',
      ].join('\n'),
    );
    if (o.json) writeFileSync(o.json, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

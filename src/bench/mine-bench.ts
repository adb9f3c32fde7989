/**
 * `npm run bench:mine`: mine all pairs (k = 10) over N sentences from ../shared/data with `paramine mine`,
 * and in the same invocation sentence-transformers' util.paraphrase_mining (scripts/mine_reference.py,
 * same model in fp32 on the same sentences): speed ratio, and how many of its top pairs ours returns.
 * Then interactive search latency of `paramine serve` idle and with a mining job running.
 *
 *   npm run bench:mine -- --n 100000 [--factory auto] [--top 10000] [--python .venv/bin/python] [--json out.json]
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { sampleSentences } from './sample-sentences.js';

interface Opts {
  n: string;
  k: string;
  top: string;
  factory: string;
  python: string;
  requests: string;
  skipReference?: boolean;
  json?: string;
}

const o = new Command()
  .option('--n <n>', 'sentences', '100000')
  .option('--k <k>', 'neighbours per sentence', '10')
  .option('--top <n>', "reference's top pairs to look for in ours", '10000')
  .option('--factory <str>', 'index factory', 'auto')
  .option('--python <path>', 'python with sentence-transformers', '.venv/bin/python')
  .option('--requests <n>', 'search requests per latency phase', '400')
  .option('--skip-reference', 'skip the sentence-transformers run')
  .option('--json <path>', 'write results as JSON')
  .parse()
  .opts<Opts>();

const secs = (t0: number) => (performance.now() - t0) / 1000;
const cli = (args: string[]) =>
  execFileSync(process.execPath, ['dist/cli.js', ...args], { encoding: 'utf8' });
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};

async function serve(index: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ['dist/cli.js', 'serve', '--index', index, '--port', '0', '--no-reranker', '--log-level', 'info'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`serve exited (${code})`)));
  });
  return { child, url };
}

async function latencies(url: string, texts: readonly string[], requests: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < requests; i++) {
    const text = texts[(i * 7919) % texts.length] as string;
    const t0 = performance.now();
    const r = await fetch(`${url}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text, k: 10, rerank: false }),
    });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`search answered ${r.status}`);
    out.push(performance.now() - t0);
  }
  return out;
}

const n = Number(o.n);
const k = Number(o.k);
const texts = await sampleSentences(n);
const dir = mkdtempSync(join(tmpdir(), 'paramine-bench-mine-'));
try {
  const corpus = join(dir, 'corpus.txt');
  writeFileSync(corpus, `${texts.join('\n')}\n`);
  const index = join(dir, 'index');

  let t0 = performance.now();
  cli(['index', '--input', corpus, '--out', index, '--factory', o.factory, '--quiet']);
  const buildS = secs(t0);
  const manifest = JSON.parse(readFileSync(join(index, 'manifest.json'), 'utf8')) as {
    factory: string;
    ntotal: number;
  };

  const pairsFile = join(dir, 'pairs.jsonl');
  t0 = performance.now();
  const mineOut = cli(['mine', '--index', index, '--out', pairsFile, '--k', String(k), '--quiet']);
  const mineS = secs(t0);
  const rss = Number(/peak RSS (\d+) MiB/.exec(mineOut)?.[1] ?? Number.NaN);
  const ours = new Set<string>();
  const key = (a: string, b: string) => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);
  for (const line of readFileSync(pairsFile, 'utf8').split('\n')) {
    if (line === '') continue;
    const p = JSON.parse(line) as { a: { text: string }; b: { text: string } };
    ours.add(key(p.a.text, p.b.text));
  }

  let reference: Record<string, number | string> | undefined;
  if (!o.skipReference) {
    const refFile = join(dir, 'reference.json');
    execFileSync(
      o.python,
      [
        'scripts/mine_reference.py',
        '--sentences',
        corpus,
        '--top-k',
        String(k),
        '--max-pairs',
        o.top,
        '--out',
        refFile,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const ref = JSON.parse(readFileSync(refFile, 'utf8')) as {
      total_s: number;
      encode_s: number;
      mine_s: number;
      peak_rss_mib: number;
      pairs: Array<[number, number, number]>;
    };
    const found = ref.pairs.filter(([, i, j]) =>
      ours.has(key(texts[i] as string, texts[j] as string)),
    ).length;
    reference = {
      total_s: ref.total_s,
      encode_s: ref.encode_s,
      mine_s: ref.mine_s,
      peak_rss_mib: ref.peak_rss_mib,
      top_pairs: ref.pairs.length,
      top_pairs_found: found,
      recall_of_top: found / ref.pairs.length,
      speedup_mine_only: ref.total_s / mineS,
      speedup_build_and_mine: ref.total_s / (buildS + mineS),
    };
  }

  // Interactive latency, idle and while a job mines the same index.
  const svc = await serve(index);
  let idle: number[];
  let busy: number[];
  let jobProgress = '';
  try {
    await latencies(svc.url, texts, 20);
    idle = await latencies(svc.url, texts, Number(o.requests));
    const res = await fetch(`${svc.url}/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ k }),
    });
    const { id } = (await res.json()) as { id: string };
    await new Promise((r) => setTimeout(r, 1000));
    busy = await latencies(svc.url, texts, Number(o.requests));
    const job = (await (await fetch(`${svc.url}/v1/jobs/${id}`)).json()) as {
      state: string;
      processed: number;
      total: number;
    };
    jobProgress = `${job.state} ${job.processed}/${job.total}`;
    await fetch(`${svc.url}/v1/jobs/${id}`, { method: 'DELETE' });
  } finally {
    svc.child.kill('SIGTERM');
  }

  const result = {
    sentences: manifest.ntotal,
    factory: manifest.factory,
    k,
    build_s: buildS,
    mine_s: mineS,
    mine_sentences_per_s: manifest.ntotal / mineS,
    pairs: ours.size,
    pairs_per_s: ours.size / mineS,
    mine_peak_rss_mib: rss,
    reference,
    search_ms_idle: { p50: pct(idle, 50), p99: pct(idle, 99) },
    search_ms_with_job: { p50: pct(busy, 50), p99: pct(busy, 99), job: jobProgress },
  };
  const f = (x: number) => x.toFixed(1);
  const lines = [
    `| sentences | factory | build | mine (k=${k}) | pairs | pairs/s | peak RSS |`,
    '|---:|---|---:|---:|---:|---:|---:|',
    `| ${result.sentences} | ${result.factory} | ${f(buildS)} s | ${f(mineS)} s | ${result.pairs} | ${result.pairs_per_s.toFixed(0)} | ${rss} MiB |`,
    '',
  ];
  if (reference) {
    lines.push(
      '| sentence-transformers paraphrase_mining | encode | mine | total | peak RSS | ours / its top pairs | speed-up (mine only) | speed-up (build + mine) |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      `| same sentences, fp32, 2 threads | ${f(Number(reference.encode_s))} s | ${f(Number(reference.mine_s))} s | ${f(Number(reference.total_s))} s | ${reference.peak_rss_mib} MiB | ${reference.top_pairs_found}/${reference.top_pairs} (${(100 * Number(reference.recall_of_top)).toFixed(2)}%) | ${Number(reference.speedup_mine_only).toFixed(1)}x | ${Number(reference.speedup_build_and_mine).toFixed(1)}x |`,
      '',
    );
  }
  lines.push(
    '| search latency (c=1, no rerank) | p50 | p99 |',
    '|---|---:|---:|',
    `| idle | ${f(result.search_ms_idle.p50)} ms | ${f(result.search_ms_idle.p99)} ms |`,
    `| mining job running (${jobProgress}) | ${f(result.search_ms_with_job.p50)} ms | ${f(result.search_ms_with_job.p99)} ms |`,
    '',
  );
  process.stdout.write(lines.join('\n'));
  if (o.json) writeFileSync(o.json, `${JSON.stringify(result, null, 2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * `npm run bench:mine`: mine all pairs (k = 10) over N sentences from ../shared/data with `paramine mine`,
 * and in the same invocation sentence-transformers' util.paraphrase_mining (scripts/mine_reference.py,
 * same model in fp32 on the same sentences): speed ratio, and how many of its top pairs ours returns.
 * Then interactive search latency of `paramine serve` idle and with a mining job running.
 *
 *   npm run bench:mine -- --n 100000 [--factories 'auto;IVF1024,PQ48np,Refine(SQ8)'] [--models a,b] [--top 10000] [--json out.json]
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { sampleSentences } from './sample-sentences.js';
import { spawnServe } from './serve-child.js';

interface Opts {
  n: string;
  k: string;
  top: string;
  factories: string;
  models: string;
  python: string;
  requests: string;
  skipReference?: boolean;
  json?: string;
}

const o = new Command()
  .option('--n <n>', 'sentences', '100000')
  .option('--k <k>', 'neighbours per sentence', '10')
  .option('--top <n>', "reference's top pairs to look for in ours", '10000')
  .option('--factories <list>', 'index factories, separated by ;', 'auto')
  .option('--models <list>', 'encoders, separated by ,', 'all-minilm-l6-v2')
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

interface Run {
  factory: string;
  model: string;
  sentences: number;
  build_s: number;
  mine_s: number;
  mine_sentences_per_s: number;
  pairs: number;
  pairs_per_s: number;
  mine_peak_rss_mib: number;
  reference?: {
    top_pairs_found: number;
    recall_of_top: number;
    speedup_mine_only: number;
    speedup_build_and_mine: number;
  };
  search_ms_idle: { p50: number; p99: number };
  search_ms_with_job: { p50: number; p99: number; job: string };
}

const n = Number(o.n);
const k = Number(o.k);
const texts = await sampleSentences(n);
const dir = mkdtempSync(join(tmpdir(), 'paramine-bench-mine-'));
const key = (a: string, b: string) => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);
try {
  const corpus = join(dir, 'corpus.txt');
  writeFileSync(corpus, `${texts.join('\n')}\n`);

  let reference:
    | {
        total_s: number;
        encode_s: number;
        mine_s: number;
        peak_rss_mib: number;
        pairs: Array<[number, number, number]>;
      }
    | undefined;
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
    reference = JSON.parse(readFileSync(refFile, 'utf8'));
  }

  const runs: Run[] = [];
  for (const model of o.models.split(',')) {
    for (const factory of o.factories.split(';')) {
      const index = join(dir, `index-${runs.length}`);
      let t0 = performance.now();
      cli(['index', '--input', corpus, '--out', index, '--model', model, '--factory', factory, '--quiet']);
      const buildS = secs(t0);
      const manifest = JSON.parse(readFileSync(join(index, 'manifest.json'), 'utf8')) as {
        factory: string;
        ntotal: number;
      };
      const pairsFile = join(dir, `pairs-${runs.length}.jsonl`);
      t0 = performance.now();
      const mineOut = cli(['mine', '--index', index, '--out', pairsFile, '--k', String(k), '--quiet']);
      const mineS = secs(t0);
      const ours = new Set<string>();
      for (const line of readFileSync(pairsFile, 'utf8').split('\n')) {
        if (line === '') continue;
        const p = JSON.parse(line) as { a: { text: string }; b: { text: string } };
        ours.add(key(p.a.text, p.b.text));
      }
      const found = reference?.pairs.filter(([, i, j]) =>
        ours.has(key(texts[i] as string, texts[j] as string)),
      ).length;
      const latency = await latencyPhases(index);
      runs.push({
        factory: manifest.factory,
        model,
        sentences: manifest.ntotal,
        build_s: buildS,
        mine_s: mineS,
        mine_sentences_per_s: manifest.ntotal / mineS,
        pairs: ours.size,
        pairs_per_s: ours.size / mineS,
        mine_peak_rss_mib: Number(/peak RSS (\d+) MiB/.exec(mineOut)?.[1] ?? Number.NaN),
        ...(reference && found !== undefined
          ? {
              reference: {
                top_pairs_found: found,
                recall_of_top: found / reference.pairs.length,
                speedup_mine_only: reference.total_s / mineS,
                speedup_build_and_mine: reference.total_s / (buildS + mineS),
              },
            }
          : {}),
        ...latency,
      });
      rmSync(index, { recursive: true, force: true });
    }
  }

  const f = (x: number) => x.toFixed(1);
  const lines = [
    `| encoder | factory | build | mine (k=${k}) | pairs | pairs/s | peak RSS | its top pairs found | speed-up, mining | speed-up, build + mining | search p50/p99 idle | with a job |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...runs.map(
      (r) =>
        `| ${r.model} | ${r.factory} | ${f(r.build_s)} s | ${f(r.mine_s)} s | ${r.pairs} | ${r.pairs_per_s.toFixed(0)} | ${r.mine_peak_rss_mib} MiB | ` +
        (r.reference
          ? `${r.reference.top_pairs_found} (${(100 * r.reference.recall_of_top).toFixed(2)}%) | ${r.reference.speedup_mine_only.toFixed(1)}x | ${r.reference.speedup_build_and_mine.toFixed(1)}x`
          : '- | - | -') +
        ` | ${f(r.search_ms_idle.p50)} / ${f(r.search_ms_idle.p99)} ms | ${f(r.search_ms_with_job.p50)} / ${f(r.search_ms_with_job.p99)} ms (${r.search_ms_with_job.job}) |`,
    ),
    '',
  ];
  if (reference) {
    lines.push(
      `sentence-transformers paraphrase_mining, same ${runs[0]?.sentences ?? n} sentences, all-MiniLM-L6-v2 fp32: encode ${f(reference.encode_s)} s + mine ${f(reference.mine_s)} s = ${f(reference.total_s)} s, peak RSS ${reference.peak_rss_mib} MiB, top ${reference.pairs.length} pairs.`,
      '',
    );
  }
  process.stdout.write(lines.join('\n'));
  if (o.json) {
    const { pairs: _pairs, ...refSummary } = reference ?? { pairs: [] };
    writeFileSync(
      o.json,
      `${JSON.stringify({ sentences: n, k, reference: reference ? refSummary : undefined, runs }, null, 2)}\n`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** Search latency of `paramine serve` over the index, idle and while it runs a mining job. */
async function latencyPhases(index: string): Promise<Pick<Run, 'search_ms_idle' | 'search_ms_with_job'>> {
  const svc = await spawnServe(
    ['dist/cli.js', 'serve', '--index', index, '--port', '0', '--no-reranker', '--log-level', 'info'],
    'inherit',
  );
  try {
    await latencies(svc.url, texts, 20);
    const idle = await latencies(svc.url, texts, Number(o.requests));
    const res = await fetch(`${svc.url}/v1/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ k }),
    });
    const { id } = (await res.json()) as { id: string };
    await new Promise((r) => setTimeout(r, 1000));
    const busy = await latencies(svc.url, texts, Number(o.requests));
    const job = (await (await fetch(`${svc.url}/v1/jobs/${id}`)).json()) as {
      state: string;
      processed: number;
      total: number;
    };
    await fetch(`${svc.url}/v1/jobs/${id}`, { method: 'DELETE' });
    return {
      search_ms_idle: { p50: pct(idle, 50), p99: pct(idle, 99) },
      search_ms_with_job: {
        p50: pct(busy, 50),
        p99: pct(busy, 99),
        job: `${job.state} ${job.processed}/${job.total}`,
      },
    };
  } finally {
    svc.child.kill('SIGTERM');
    await once(svc.child, 'exit');
  }
}

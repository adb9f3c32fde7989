/**
 * `paramine bench mine`: mine all pairs (k = 10) over N sentences from ../shared/data with `paramine mine`,
 * and in the same invocation sentence-transformers' util.paraphrase_mining (bench/python/mine_reference.py,
 * same model in fp32 on the same sentences): speed ratio, and how many of its top pairs ours returns.
 * Then interactive search latency of `paramine serve` idle and with a mining job running.
 *
 *   paramine bench mine --n 100000 [--factories 'auto;IVF1024,PQ48np,Refine(SQ8)'] [--models a,b] [--top 10000] [--json out.json]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { runCli } from '../../dist/bench/child.js';
import { defineBenchmark, type Log } from '../../dist/bench/harness.js';
import { readManifest } from '../../dist/index/index.js';
import { latencyPhases } from './mine-latency.js';
import { sampleSentences } from './shared-sentences.js';

const MIB = 2 ** 20;

const mineSchema = z.object({
  n: z.coerce.number().int().min(1),
  k: z.coerce.number().int().min(1),
  top: z.coerce.number().int().min(1),
  factories: z.string().transform((s) => s.split(';').filter(Boolean)),
  models: z.string().transform((s) => s.split(',').filter(Boolean)),
  python: z.string().min(1),
  requests: z.coerce.number().int().min(1),
  skipReference: z.boolean().default(false),
});
type MineOptions = z.output<typeof mineSchema>;

const referenceSchema = z.looseObject({
  total_s: z.number(),
  encode_s: z.number(),
  mine_s: z.number(),
  peak_rss_mib: z.number(),
  pairs: z.array(z.tuple([z.number(), z.number(), z.number()])),
});
type Reference = z.output<typeof referenceSchema>;

/** sentence-transformers' paraphrase_mining on the same sentences: its timings and top pairs. */
function reference(o: MineOptions, corpus: string, dir: string): Reference {
  const out = join(dir, 'reference.json');
  const args = ['--sentences', corpus, '--top-k', String(o.k), '--max-pairs', String(o.top), '--out', out];
  execFileSync(o.python, ['bench/python/mine_reference.py', ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return referenceSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
}

/** The reference's own figures without its pair list (which can be long). */
function withoutPairs(
  ref: Reference,
): Pick<Reference, 'total_s' | 'encode_s' | 'mine_s' | 'peak_rss_mib'> & Record<string, unknown> {
  const { pairs: _pairs, ...summary } = ref;
  return summary;
}

const key = (a: string, b: string) => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);

/** The pairs `paramine mine` wrote, as unordered text pairs. */
function minedPairs(file: string): Set<string> {
  const line = z.object({ a: z.object({ text: z.string() }), b: z.object({ text: z.string() }) });
  const pairs = new Set<string>();
  for (const l of readFileSync(file, 'utf8').split('\n')) {
    if (l === '') continue;
    const p = line.parse(JSON.parse(l));
    pairs.add(key(p.a.text, p.b.text));
  }
  return pairs;
}

interface Setup {
  texts: readonly string[];
  corpus: string;
  dir: string;
  ref: Reference | undefined;
}

/** One encoder and factory: build, mine, compare with the reference, then search latency. */
async function mineOne(o: MineOptions, s: Setup, model: string, factory: string, i: number, log: Log) {
  const index = join(s.dir, `index-${i}`);
  log(`${model}, ${factory}: paramine index`);
  const build = runCli([
    'index',
    '--input',
    s.corpus,
    '--out',
    index,
    '--model',
    model,
    '--factory',
    factory,
    '--quiet',
  ]);
  const manifest = await readManifest(index);
  const pairsFile = join(s.dir, `pairs-${i}.jsonl`);
  log(`${model}, ${manifest.factory}: paramine mine`);
  const mine = runCli(['mine', '--index', index, '--out', pairsFile, '--k', String(o.k), '--quiet']);
  const ours = minedPairs(pairsFile);
  const { ref, texts } = s;
  const found = ref?.pairs.filter(([, a, b]) => ours.has(key(texts[a] as string, texts[b] as string))).length;
  const latency = await latencyPhases(index, texts, o);
  rmSync(index, { recursive: true, force: true });
  return {
    factory: manifest.factory,
    model,
    sentences: manifest.ntotal,
    build_s: build.wall_s,
    mine_s: mine.wall_s,
    mine_sentences_per_s: manifest.ntotal / mine.wall_s,
    pairs: ours.size,
    pairs_per_s: ours.size / mine.wall_s,
    mine_peak_rss_mib: Math.round(mine.max_rss_bytes / MIB),
    ...(ref && found !== undefined
      ? {
          reference: {
            top_pairs_found: found,
            recall_of_top: found / ref.pairs.length,
            speedup_mine_only: ref.total_s / mine.wall_s,
            speedup_build_and_mine: ref.total_s / (build.wall_s + mine.wall_s),
          },
        }
      : {}),
    ...latency,
  };
}
type MineRun = Awaited<ReturnType<typeof mineOne>>;

async function mineBenchmark(o: MineOptions, log: Log) {
  const texts = await sampleSentences(o.n);
  const dir = mkdtempSync(join(tmpdir(), 'paramine-bench-mine-'));
  try {
    const corpus = join(dir, 'corpus.txt');
    writeFileSync(corpus, `${texts.join('\n')}\n`);
    if (!o.skipReference) log('sentence-transformers paraphrase_mining (the reference)');
    const ref = o.skipReference ? undefined : reference(o, corpus, dir);
    const runs: MineRun[] = [];
    for (const model of o.models)
      for (const factory of o.factories)
        runs.push(await mineOne(o, { texts, corpus, dir, ref }, model, factory, runs.length, log));
    return {
      sentences: o.n,
      k: o.k,
      reference: ref && withoutPairs(ref),
      reference_pairs: ref?.pairs.length,
      runs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function mineMarkdown(r: Awaited<ReturnType<typeof mineBenchmark>>): string {
  const f = (x: number) => x.toFixed(1);
  const row = (x: MineRun) =>
    `| ${x.model} | ${x.factory} | ${f(x.build_s)} s | ${f(x.mine_s)} s | ${x.pairs} | ${x.pairs_per_s.toFixed(0)} | ${x.mine_peak_rss_mib} MiB | ` +
    (x.reference
      ? `${x.reference.top_pairs_found} (${(100 * x.reference.recall_of_top).toFixed(2)}%) | ${x.reference.speedup_mine_only.toFixed(1)}x | ${x.reference.speedup_build_and_mine.toFixed(1)}x`
      : '- | - | -') +
    ` | ${f(x.search_ms_idle.p50)} / ${f(x.search_ms_idle.p99)} ms | ${f(x.search_ms_with_job.p50)} / ${f(x.search_ms_with_job.p99)} ms (${x.search_ms_with_job.job}) |`;
  const lines = [
    `| encoder | factory | build | mine (k=${r.k}) | pairs | pairs/s | peak RSS | its top pairs found | speed-up, mining | speed-up, build + mining | search p50/p99 idle | with a job |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.runs.map(row),
    '',
  ];
  const ref = r.reference;
  if (ref) {
    lines.push(
      `sentence-transformers paraphrase_mining, same ${r.runs[0]?.sentences ?? r.sentences} sentences, all-MiniLM-L6-v2 fp32: encode ${f(ref.encode_s)} s + mine ${f(ref.mine_s)} s = ${f(ref.total_s)} s, peak RSS ${ref.peak_rss_mib} MiB, top ${r.reference_pairs} pairs.`,
      '',
    );
  }
  return lines.join('\n');
}

export const mine = defineBenchmark({
  name: 'mine',
  description: 'paramine mine against sentence-transformers paraphrase_mining; search latency during a job',
  options: (cmd) =>
    cmd
      .option('--n <n>', 'sentences', '100000')
      .option('--k <k>', 'neighbours per sentence', '10')
      .option('--top <n>', "reference's top pairs to look for in ours", '10000')
      .option('--factories <list>', 'index factories, separated by ;', 'auto')
      .option('--models <list>', 'encoders, separated by ,', 'all-minilm-l6-v2')
      .option('--python <path>', 'python with sentence-transformers', '.venv/bin/python')
      .option('--requests <n>', 'search requests per latency phase', '400')
      .option('--skip-reference', 'skip the sentence-transformers run'),
  schema: mineSchema,
  async run(o, log) {
    const result = await mineBenchmark(o, log);
    return { result, markdown: mineMarkdown(result) };
  },
});

/**
 * SIGKILL at random points of an index build and a mining job, then resume, compared with uninterrupted
 * runs:
 *
 *   npm run lab -- kill-loop --iterations 100 [--sentences 400] [--seed 1] [--json FILE]
 *
 * Each iteration starts a fresh `paramine index` and kills it (SIGKILL) after a random share of the
 * reference build's wall time, then runs it again with --resume until it finishes; likewise a fresh
 * `paramine mine` over the reference index, killed and resumed with --resume. The resumed index must have
 * the reference's shard and vector bytes (sha256 in the manifest), the resumed pairs file the reference's
 * pairs, in the same order: none lost, none twice.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineBenchmark, type Log } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { Rng } from '../../dist/testing/index.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const ROOT = resolve(dirname(CLI), '..');

const killSchema = z.object({
  iterations: z.coerce.number().int().min(1).max(10_000),
  sentences: z.coerce.number().int().min(50).max(100_000),
  seed: z.coerce.number().int(),
});
type KillOptions = z.output<typeof killSchema>;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  stderr: string;
}

/** `paramine ARGS`, SIGKILLed after `killAfterMs` when given. */
async function cli(args: readonly string[], killAfterMs?: number): Promise<Run> {
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, [CLI, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-2000);
  });
  const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  return { code, signal, ms: performance.now() - t0, stderr };
}

const buildArgs = (input: string, out: string) => ['index', '--input', input, '--out', out, '--quiet'];
const mineArgs = (index: string, out: string) => [
  ...['mine', '--index', index, '--out', out, '--k', '8', '--margin-k', '4', '--min-cosine', '0.3'],
  ...['--batch-size', '4', '--cluster', '--quiet', '--faiss-threads', '1'],
];

/** What must not change: shard and vector bytes, and the sentence count. */
function indexFingerprint(dir: string): string {
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
    ntotal: number;
    shards: { sha256?: string }[];
    vectors?: { sha256?: string };
  };
  return JSON.stringify({
    ntotal: m.ntotal,
    shards: m.shards.map((s) => s.sha256),
    vectors: m.vectors?.sha256,
  });
}

const pairsOf = (file: string) => readFileSync(file, 'utf8');

/** Runs `args` killed once at `killAt`, then with --resume until it exits 0 (at most 5 times). */
async function killThenResume(args: string[], killAt: number) {
  const first = await cli(args, killAt);
  const killed = first.signal === 'SIGKILL';
  if (!killed && first.code !== 0) throw new Error(`paramine ${args[0]} failed: ${first.stderr}`);
  let resumes = 0;
  if (killed) {
    let resume = true;
    for (;;) {
      const r = await cli(resume ? [...args, '--resume'] : args);
      resumes++;
      // Also when it was killed after it had finished (manifest written, exit pending): --resume exits 0.
      if (r.code === 0) break;
      // Killed before it saved any state: there is nothing to resume, so it starts over.
      resume = !/nothing to resume/.test(r.stderr);
      if (resumes >= 5) throw new Error(`paramine ${args[0]} --resume failed: ${r.stderr}`);
    }
  }
  return { killed, resumes };
}

interface Iteration {
  i: number;
  build: { killAtMs: number; killed: boolean; identical: boolean };
  mine: { killAtMs: number; killed: boolean; identical: boolean; pairs: number };
}

async function killLoop(o: KillOptions, log: Log) {
  const work = mkdtempSync(join(tmpdir(), 'paramine-kill-loop-'));
  const loadBefore = loadavg();
  try {
    const corpus = join(work, 'corpus.jsonl');
    const lines = readFileSync(join(ROOT, 'examples', 'demo-corpus.jsonl'), 'utf8').split('\n');
    writeFileSync(corpus, `${lines.slice(0, o.sentences).join('\n')}\n`);
    const ref = join(work, 'ref');
    const refBuild = await cli(buildArgs(corpus, ref));
    const refMine = await cli(mineArgs(ref, join(work, 'ref.jsonl')));
    if (refBuild.code !== 0 || refMine.code !== 0)
      throw new Error(`reference runs failed: ${refBuild.stderr}${refMine.stderr}`);
    const refIndex = indexFingerprint(ref);
    const refPairs = pairsOf(join(work, 'ref.jsonl'));
    const pairs = refPairs.trim() === '' ? 0 : refPairs.trim().split('\n').length;
    log(`reference: build ${refBuild.ms.toFixed(0)} ms, mine ${refMine.ms.toFixed(0)} ms, ${pairs} pairs`);
    const rng = new Rng(o.seed);
    const rows: Iteration[] = [];
    for (let i = 0; i < o.iterations; i++) {
      const it = join(work, `it-${i}`);
      mkdirSync(it);
      const buildAt = rng.next() * refBuild.ms;
      const b = await killThenResume(buildArgs(corpus, join(it, 'index')), buildAt);
      const mineAt = rng.next() * refMine.ms;
      const m = await killThenResume(mineArgs(ref, join(it, 'pairs.jsonl')), mineAt);
      const row: Iteration = {
        i,
        build: {
          killAtMs: Math.round(buildAt),
          killed: b.killed,
          identical: indexFingerprint(join(it, 'index')) === refIndex,
        },
        mine: {
          killAtMs: Math.round(mineAt),
          killed: m.killed,
          identical: pairsOf(join(it, 'pairs.jsonl')) === refPairs,
          pairs,
        },
      };
      rows.push(row);
      log(JSON.stringify(row));
      rmSync(it, { recursive: true, force: true });
    }
    return {
      benchmark: 'kill-loop',
      command: `npm run lab -- kill-loop ${process.argv.slice(4).join(' ')}`.trim(),
      machine: machineInfo(loadBefore),
      options: o,
      reference: { buildMs: refBuild.ms, mineMs: refMine.ms, pairs },
      rows,
      summary: {
        iterations: rows.length,
        buildKills: rows.filter((r) => r.build.killed).length,
        buildIdentical: rows.filter((r) => r.build.identical).length,
        mineKills: rows.filter((r) => r.mine.killed).length,
        mineIdentical: rows.filter((r) => r.mine.identical).length,
      },
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export type KillLoopResult = Awaited<ReturnType<typeof killLoop>>;

function markdown(r: KillLoopResult): string {
  const s = r.summary;
  return [
    '| phase | iterations | killed mid-run | resumed result identical to uninterrupted |',
    '| --- | ---: | ---: | ---: |',
    `| index build (${r.options.sentences} sentences) | ${s.iterations} | ${s.buildKills} | ${s.buildIdentical} |`,
    `| mining job (${r.reference.pairs} pairs) | ${s.iterations} | ${s.mineKills} | ${s.mineIdentical} |`,
    '',
    `Reference build ${(r.reference.buildMs / 1000).toFixed(1)} s, mine ${(r.reference.mineMs / 1000).toFixed(1)} s; ` +
      `kill points uniform over those (seed ${r.options.seed}); ${r.machine.cpus} CPUs, load ` +
      `${r.machine.loadavgBefore.map((x) => x.toFixed(2)).join(' ')} before`,
    '',
  ].join('\n');
}

export const killLoopBench = defineBenchmark({
  name: 'kill-loop',
  description:
    'SIGKILL an index build and a mining job at random points, resume, compare with uninterrupted runs',
  options: (cmd) =>
    cmd
      .option('--iterations <n>', 'kill-and-resume rounds (each: one build, one job)', '100')
      .option('--sentences <n>', 'demo corpus sentences indexed', '400')
      .option('--seed <n>', 'seed of the kill points', '1'),
  schema: killSchema,
  async run(o, log) {
    const result = await killLoop(o, log);
    return { result, markdown: markdown(result) };
  },
});

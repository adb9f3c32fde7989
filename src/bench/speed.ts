/**
 * `paramine bench speed`: the speed benchmarks (encoder, FAISS index, offline build, HTTP service,
 * mining) run one after another, each as its own `paramine bench PART` child process with its own
 * reference run, gathered into one Markdown report and one JSON file from the JSON and Markdown each
 * child writes. Run it on an idle machine: the benchmarks time against each other.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineBenchmark, type Log, list } from './harness.js';

export const SPEED_PARTS = ['encode', 'index', 'indexer', 'serve', 'mine'] as const;
export type SpeedPart = (typeof SPEED_PARTS)[number];

interface PartSpec {
  title: string;
  /** Options for a full run and for --quick. */
  args(quick: boolean): string[];
}

const PARTS: Record<SpeedPart, PartSpec> = {
  encode: {
    title: 'Encoder and cross-encoder (sentences/s vs sentence-transformers)',
    args: (quick) => (quick ? ['--n', '256', '--batches', '32'] : []),
  },
  index: {
    title: 'FAISS binding vs Python FAISS (build, QPS, latency, recall)',
    args: (quick) => (quick ? ['--n', '20000'] : []),
  },
  indexer: {
    title: 'Offline build vs encoder alone',
    args: (quick) => ['--n', quick ? '5000' : '100000'],
  },
  serve: {
    title: 'HTTP service latency and throughput',
    args: (quick) => (quick ? ['--duration', '3', '--concurrency', '1,16'] : []),
  },
  mine: {
    title: 'Mining vs sentence-transformers paraphrase_mining; search latency during a job',
    args: (quick) => ['--n', quick ? '5000' : '100000'],
  },
};

const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));

interface PartRun {
  markdown: string[];
  result?: unknown;
  failed: boolean;
}

/** One part as `paramine bench PART --json FILE --md FILE`; its figures come from those files. */
function runPart(part: SpeedPart, out: string, quick: boolean, log: Log): PartRun {
  const spec = PARTS[part];
  const json = join(out, `${part}.json`);
  const md = join(out, `${part}.md`);
  log(`${part} …`);
  const started = performance.now();
  const r = spawnSync(
    process.execPath,
    [CLI, 'bench', part, ...spec.args(quick), '--json', json, '--md', md],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 << 20,
    },
  );
  const secs = ((performance.now() - started) / 1000).toFixed(0);
  const head = [
    `## ${spec.title}`,
    '',
    `\`paramine bench ${part} ${spec.args(quick).join(' ')}\` (${secs} s)`,
    '',
  ];
  if (r.status !== 0 || !existsSync(json) || !existsSync(md)) {
    const tail = (r.stdout ?? '').slice(-2000);
    return {
      markdown: [
        ...head,
        `**failed** (exit ${r.status ?? r.signal}); its output:`,
        '',
        '```',
        tail,
        '```',
        '',
      ],
      failed: true,
    };
  }
  const result: unknown = JSON.parse(readFileSync(json, 'utf8'));
  return { markdown: [...head, readFileSync(md, 'utf8').trim(), ''], result, failed: false };
}

export interface SpeedOptions {
  out: string;
  only: readonly SpeedPart[];
  quick: boolean;
}

export function runSpeed(o: SpeedOptions, log: Log) {
  mkdirSync(o.out, { recursive: true });
  const cpu = cpus()[0]?.model ?? 'CPU';
  const report: string[] = [
    '# paramine speed report',
    '',
    `${new Date().toISOString()}, ${cpus().length} × ${cpu}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
      `Node ${process.version}${o.quick ? ', --quick sizes (smoke run, not for publishing)' : ''}`,
    '',
  ];
  const results: Record<string, unknown> = {};
  const failed: SpeedPart[] = [];
  for (const part of o.only) {
    const run = runPart(part, o.out, o.quick, log);
    report.push(...run.markdown);
    if (run.failed) failed.push(part);
    else results[part] = run.result;
  }
  const result = { kind: 'speed' as const, quick: o.quick, results, failed };
  const markdown = `${report.join('\n')}\n`;
  writeFileSync(join(o.out, 'speed.md'), markdown);
  writeFileSync(join(o.out, 'speed.json'), `${JSON.stringify(result, null, 2)}\n`);
  return { result, markdown };
}

export const speed = defineBenchmark({
  name: 'speed',
  description: 'encoder, index, build, HTTP and mining speed benchmarks, gathered into one report',
  options: (cmd) =>
    cmd
      .option(
        '--out <dir>',
        'where the report (speed.md, speed.json) and each part’s JSON go',
        'bench-results',
      )
      .option('--only <parts>', `some of ${SPEED_PARTS.join(',')}`, list)
      .option('--quick', 'small sizes: a smoke run, not numbers to publish', false),
  schema: z.object({
    out: z.string().min(1),
    only: z
      .array(z.enum(SPEED_PARTS))
      .min(1)
      .default([...SPEED_PARTS]),
    quick: z.boolean().default(false),
  }),
  async run(o, log) {
    const out = runSpeed(o, log);
    if (out.result.failed.length > 0) process.exitCode = 1;
    return out;
  },
});

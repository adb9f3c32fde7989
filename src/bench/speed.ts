/**
 * `paramine bench speed`: the speed benchmarks a user runs on their own machine (offline build, HTTP
 * service) one after another, each as its own child process with its own reference run, gathered into one
 * Markdown report and one JSON file from the JSON and Markdown each child writes. The laboratory's `speed`
 * adds the parts measured against Python references (encoder, FAISS, mining) through the same runner. Run it
 * on an idle machine: the benchmarks time against each other.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineBenchmark, type Log, list } from './harness.js';

export interface PartSpec {
  title: string;
  /** The command as a user types it, for the report. */
  shown: string;
  /** The node script and the words before the options: `[cli.js, 'bench', 'serve']`. */
  command: string[];
  /** Options for a full run and for --quick. */
  args(quick: boolean): string[];
}

const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));

/** The parts a user runs on their own machine: each measured beside a reference run in the same process. */
export const PRODUCT_PARTS: Record<string, PartSpec> = {
  indexer: {
    title: 'Offline build vs encoder alone',
    shown: 'paramine bench indexer',
    command: [CLI, 'bench', 'indexer'],
    args: (quick) => ['--n', quick ? '5000' : '100000'],
  },
  serve: {
    title: 'HTTP service latency and throughput',
    shown: 'paramine bench serve',
    command: [CLI, 'bench', 'serve'],
    args: (quick) => (quick ? ['--duration', '3', '--concurrency', '1,16'] : []),
  },
};

interface PartRun {
  markdown: string[];
  result?: unknown;
  failed: boolean;
}

/** One part as `COMMAND --json FILE --md FILE`; its figures come from those files. */
function runPart(part: string, spec: PartSpec, out: string, quick: boolean, log: Log): PartRun {
  const json = join(out, `${part}.json`);
  const md = join(out, `${part}.md`);
  log(`${part} …`);
  const started = performance.now();
  const r = spawnSync(process.execPath, [...spec.command, ...spec.args(quick), '--json', json, '--md', md], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 << 20,
  });
  const secs = ((performance.now() - started) / 1000).toFixed(0);
  const head = [`## ${spec.title}`, '', `\`${[spec.shown, ...spec.args(quick)].join(' ')}\` (${secs} s)`, ''];
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
  only: readonly string[];
  quick: boolean;
}

export function runSpeed(parts: Record<string, PartSpec>, o: SpeedOptions, log: Log) {
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
  const failed: string[] = [];
  for (const part of o.only) {
    const run = runPart(part, parts[part] as PartSpec, o.out, o.quick, log);
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

/** The speed benchmark over these parts (the product's, or the laboratory's superset). */
export function speedBenchmark(parts: Record<string, PartSpec>, description: string) {
  const names = Object.keys(parts) as [string, ...string[]];
  return defineBenchmark({
    name: 'speed',
    description,
    options: (cmd) =>
      cmd
        .option(
          '--out <dir>',
          'where the report (speed.md, speed.json) and each part’s JSON go',
          'bench-results',
        )
        .option('--only <parts>', `some of ${names.join(',')}`, list)
        .option('--quick', 'small sizes: a smoke run, not numbers to publish', false),
    schema: z.object({
      out: z.string().min(1),
      only: z.array(z.enum(names)).min(1).default(names),
      quick: z.boolean().default(false),
    }),
    async run(o, log) {
      const out = runSpeed(parts, o, log);
      if (out.result.failed.length > 0) process.exitCode = 1;
      return out;
    },
  });
}

export const speed = speedBenchmark(
  PRODUCT_PARTS,
  'offline build and HTTP speed benchmarks, each beside its reference, gathered into one report',
);

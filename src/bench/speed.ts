/**
 * `paramine bench speed`: the speed benchmarks (encoder, FAISS index, offline build, HTTP service,
 * mining) run one after another as child processes, each with its own reference run, gathered into one
 * Markdown report and one JSON file. Run it on an idle machine: the scripts time against each other.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SPEED_PARTS = ['encode', 'index', 'indexer', 'serve', 'mine'] as const;
export type SpeedPart = (typeof SPEED_PARTS)[number];

interface PartSpec {
  title: string;
  script: string;
  /** Arguments for a full run and for --quick; `json` is where the script writes its JSON. */
  args(json: string, quick: boolean): string[];
}

const PARTS: Record<SpeedPart, PartSpec> = {
  encode: {
    title: 'Encoder and cross-encoder (sentences/s vs sentence-transformers)',
    script: 'encode-bench.js',
    args: (json, quick) => ['--out', json, ...(quick ? ['--n', '256', '--batches', '32'] : [])],
  },
  index: {
    title: 'FAISS binding vs Python FAISS (build, QPS, latency, recall)',
    script: 'index-bench.js',
    args: (json, quick) => ['--out', json, ...(quick ? ['--n', '20000'] : [])],
  },
  indexer: {
    title: 'Offline build vs encoder alone',
    script: 'indexer-bench.js',
    args: (json, quick) => ['--json', json, '--n', quick ? '5000' : '100000'],
  },
  serve: {
    title: 'HTTP service latency and throughput',
    script: 'serve-bench.js',
    args: (json, quick) => ['--json', json, ...(quick ? ['--duration', '3', '--concurrency', '1,16'] : [])],
  },
  mine: {
    title: 'Mining vs sentence-transformers paraphrase_mining; search latency during a job',
    script: 'mine-bench.js',
    args: (json, quick) => ['--json', json, '--n', quick ? '5000' : '100000'],
  },
};

export interface SpeedOptions {
  out: string;
  parts: readonly SpeedPart[];
  quick: boolean;
}

export function runSpeed(o: SpeedOptions): { failed: SpeedPart[] } {
  mkdirSync(o.out, { recursive: true });
  const report: string[] = [
    '# paramine speed report',
    '',
    `${new Date().toISOString()}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ` +
      `Node ${process.version}${o.quick ? ', --quick sizes (smoke run, not for publishing)' : ''}`,
    '',
  ];
  const results: Record<string, unknown> = {};
  const failed: SpeedPart[] = [];
  for (const part of o.parts) {
    const spec = PARTS[part];
    const json = join(o.out, `${part}.json`);
    const script = fileURLToPath(new URL(`./${spec.script}`, import.meta.url));
    process.stderr.write(`bench speed: ${part} …\n`);
    const started = performance.now();
    const r = spawnSync(process.execPath, [script, ...spec.args(json, o.quick)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 << 20,
    });
    const secs = ((performance.now() - started) / 1000).toFixed(0);
    report.push(
      `## ${spec.title}`,
      '',
      `\`node dist/bench/${spec.script} ${spec.args('FILE', o.quick).join(' ')}\` (${secs} s)`,
      '',
    );
    if (r.status !== 0) {
      failed.push(part);
      report.push(
        `**failed** (exit ${r.status ?? r.signal}); its output:`,
        '',
        '```',
        (r.stdout ?? '').slice(-2000),
        '```',
        '',
      );
      continue;
    }
    report.push((r.stdout ?? '').trim(), '');
    if (existsSync(json)) results[part] = JSON.parse(readFileSync(json, 'utf8'));
  }
  writeFileSync(join(o.out, 'speed.md'), `${report.join('\n')}\n`);
  writeFileSync(
    join(o.out, 'speed.json'),
    `${JSON.stringify({ kind: 'speed', quick: o.quick, results }, null, 2)}\n`,
  );
  process.stdout.write(`${report.join('\n')}\n`);
  return { failed };
}

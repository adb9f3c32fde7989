/**
 * A preload that traces any paramine command's memory without touching its code:
 *
 *   RSS_TRACE=trace.log node --import ./bench/dist/rss-trace.js dist/cli.js docs align ...
 *
 * Every 0.5 s, and as the process exits, it appends one line: seconds since start, the main process's
 * /proc status in KiB (VmRSS, its anonymous and file-backed parts, VmHWM: the kernel's high-water mark,
 * what `/usr/bin/time -v` reports as "Maximum resident set size") and `process.memoryUsage()` in KiB.
 * /usr/bin/time gives one number; this shows which stage set it and whether it was held memory or
 * mapped file pages (docs/benchmarks/documents.md reads 10^6 alignments this way).
 */
import { openSync, readFileSync, writeSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const STATUS_KEYS = ['VmRSS', 'RssAnon', 'RssFile', 'VmHWM'] as const;
const LABELS = ['rss', 'anon', 'file', 'hwm'];

/** The /proc/self/status fields above, in KiB (0 where the kernel has none, as on non-Linux systems). */
export function statusKiB(status: string): number[] {
  return STATUS_KEYS.map((k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0));
}

/** One trace line: `12.5 rss=… anon=… file=… hwm=… heapUsed=… heapTotal=… external=… ab=…` (KiB). */
export function traceLine(seconds: number, status: string, m: NodeJS.MemoryUsage): string {
  const proc = statusKiB(status).map((v, i) => `${LABELS[i]}=${v}`);
  const kib = (n: number) => Math.floor(n / 1024);
  const heap = `heapUsed=${kib(m.heapUsed)} heapTotal=${kib(m.heapTotal)} external=${kib(m.external)} ab=${kib(m.arrayBuffers)}`;
  return `${seconds.toFixed(1)} ${proc.join(' ')} ${heap}\n`;
}

function start(path: string): void {
  const fd = openSync(path, 'w');
  const t0 = performance.now();
  const tick = () => {
    let status = '';
    try {
      status = readFileSync('/proc/self/status', 'utf8');
    } catch {
      // not Linux: the process's own figures still come
    }
    writeSync(fd, traceLine((performance.now() - t0) / 1000, status, process.memoryUsage()));
  };
  setInterval(tick, 500).unref();
  process.on('exit', tick);
}

// Workers inherit --import; only the main thread writes (its /proc status covers the whole process).
const path = process.env.RSS_TRACE;
if (isMainThread && path) start(path);

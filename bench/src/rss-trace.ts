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
import { openSync, writeSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { statusKiB } from './proc-status.js';

export const STATUS_KEYS = ['VmRSS', 'RssAnon', 'RssFile', 'VmHWM'] as const;
const LABELS = ['rss', 'anon', 'file', 'hwm'];

/**
 * One trace line: `12.5 rss=… anon=… file=… hwm=… heapUsed=… heapTotal=… external=… ab=…` (KiB); `kib`:
 * the STATUS_KEYS' values (0 each off Linux).
 */
export function traceLine(seconds: number, kib: readonly number[], m: NodeJS.MemoryUsage): string {
  const proc = STATUS_KEYS.map((_, i) => `${LABELS[i]}=${kib[i] ?? 0}`);
  const k = (n: number) => Math.floor(n / 1024);
  const heap = `heapUsed=${k(m.heapUsed)} heapTotal=${k(m.heapTotal)} external=${k(m.external)} ab=${k(m.arrayBuffers)}`;
  return `${seconds.toFixed(1)} ${proc.join(' ')} ${heap}\n`;
}

function start(path: string): void {
  const fd = openSync(path, 'w');
  const t0 = performance.now();
  // Off Linux the /proc fields read 0; the process's own figures still come.
  const tick = () =>
    writeSync(
      fd,
      traceLine((performance.now() - t0) / 1000, statusKiB(STATUS_KEYS) ?? [], process.memoryUsage()),
    );
  setInterval(tick, 500).unref();
  process.on('exit', tick);
}

// Workers inherit --import; only the main thread writes (its /proc status covers the whole process).
const path = process.env.RSS_TRACE;
if (isMainThread && path) start(path);

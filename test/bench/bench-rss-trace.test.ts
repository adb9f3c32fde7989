import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parseStatusKiB } from '../../bench/src/proc-status.js';
import { STATUS_KEYS, traceLine } from '../../bench/src/rss-trace.js';

const STATUS = 'Name:\tnode\nVmHWM:\t  900 kB\nVmRSS:\t  800 kB\nRssAnon:\t  700 kB\nRssFile:\t  100 kB\n';

t.test('parseStatusKiB reads the fields in the order named, 0 where missing', async (t) => {
  t.same(parseStatusKiB(STATUS, STATUS_KEYS), [800, 700, 100, 900]);
  t.same(parseStatusKiB('', STATUS_KEYS), [0, 0, 0, 0]);
});

t.test('traceLine writes seconds, /proc fields and the heap in KiB', async (t) => {
  const m = { rss: 0, heapUsed: 2048, heapTotal: 4096, external: 1024, arrayBuffers: 512 };
  t.equal(
    traceLine(1.25, parseStatusKiB(STATUS, STATUS_KEYS), m),
    '1.3 rss=800 anon=700 file=100 hwm=900 heapUsed=2 heapTotal=4 external=1 ab=0\n',
  );
});

t.test('as a preload it traces a process that grows, from the main thread only', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rss-trace-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'trace.log');
  // This test's own loaders come along (execArgv), so the preload runs from its TypeScript source.
  // 200 MB held for 1.2 s from 0.6 s on (after the first tick), and a worker that would write its own lines if the guard failed.
  // (A worker from a file: Node runs --import in those, not in eval'd ones.)
  const worker = join(dir, 'worker.cjs');
  writeFileSync(worker, 'setTimeout(() => {}, 700);');
  const script =
    `const { Worker } = require('node:worker_threads'); new Worker(${JSON.stringify(worker)});` +
    'setTimeout(() => { const b = Buffer.alloc(200 * 2 ** 20, 1); setTimeout(() => b.length, 1200); }, 600);';
  const preload = new URL('../../bench/src/rss-trace.ts', import.meta.url).pathname;
  const r = spawnSync(process.execPath, [...process.execArgv, '--import', preload, '-e', script], {
    env: { ...process.env, RSS_TRACE: log },
    encoding: 'utf8',
  });
  t.equal(r.status, 0, r.stderr);
  const text = readFileSync(log, 'utf8');
  const line =
    /^(\d+\.\d) rss=\d+ anon=\d+ file=\d+ hwm=(\d+) heapUsed=\d+ heapTotal=\d+ external=\d+ ab=\d+$/;
  const rows = text
    .trimEnd()
    .split('\n')
    .map((l) => line.exec(l));
  t.ok(rows.length >= 2 && rows.every(Boolean), `whole lines only, ticks and the exit's:\n${text}`);
  const seconds = rows.map((r) => Number(r?.[1]));
  // A second writer (the worker) would truncate the file or start its own clock again (a drop). The exit's
  // line may round to the last tick's tenth (CI saw 0.5,1,1.5,2,2), so equal is allowed.
  t.ok(
    seconds.every((s, i) => i === 0 || s >= (seconds[i - 1] ?? s)),
    `one clock: ${seconds}`,
  );
  const hwm = rows.map((r) => Number(r?.[2]));
  const rise = Math.max(...hwm) - (hwm[0] ?? 0);
  t.ok(rise > 190 * 1024, `the high-water mark rises by the 200 MB buffer: ${rise} KiB`);
});

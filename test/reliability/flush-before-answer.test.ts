/**
 * No 2xx before its write's flush returned (issue #51): a real `paramine serve` child runs with a shim
 * preloaded (test/fixtures/slow-fsync: built here with gcc, in this test only) that makes every fsync,
 * fdatasync and msync(MS_SYNC) 300 ms slower and logs when each returned. An add, a delete, an annotation
 * and a job's creation each get their 2xx only after a flush that started after the request returned:
 * the answer takes the 300 ms, and a flush ended between the request and the answer. Where the guarantee
 * comes from: lmdb-js resolves a write transaction's promise once its commit is flushed (overlappingSync,
 * its default on Linux: the fdatasync runs off the main thread and the promise waits for it), and every
 * route awaits its write before answering (src/store/updates.ts, src/jobs/store.ts, src/annotations/store.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildIndex } from '../../src/indexer/build.js';
import { spawnServe } from '../../src/testing/index.js';

const DELAY_MS = 300;
const MODEL = 'test/fixtures/tiny-encoder';
const dir = mkdtempSync(join(tmpdir(), 'paramine-flush-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const shim = join(dir, 'slow-fsync.so');
execFileSync('gcc', ['-shared', '-fPIC', '-O2', '-o', shim, 'test/fixtures/slow-fsync/slow-fsync.c', '-ldl']);
const log = join(dir, 'flushes.log');

writeFileSync(
  join(dir, 'c.txt'),
  'The harbour closed for three days.\nBoats stayed at the pier.\nA new symphony opened.\n',
);
const index = join(dir, 'index');
await buildIndex({ inputs: [join(dir, 'c.txt')], out: index, model: MODEL, quiet: true });
const serve = await spawnServe(
  [
    ...process.execArgv,
    'src/cli.ts',
    'serve',
    '--index',
    index,
    '--model',
    MODEL,
    '--no-reranker',
    '--jobs-dir',
    join(dir, 'jobs'),
    '--annotations-dir',
    join(dir, 'annotations'),
  ],
  {
    env: { ...process.env, LD_PRELOAD: shim, SLOW_FSYNC_MS: String(DELAY_MS), SLOW_FSYNC_LOG: log },
  },
);
t.teardown(() => serve.stop());

/** When each flush returned (epoch ms). */
const flushes = () =>
  readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => Number(l.split(' ')[1]));

async function timed(method: string, path: string, body?: unknown) {
  const t0 = Date.now();
  const res = await fetch(`${serve.url}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  await res.arrayBuffer();
  return { status: res.status, t0, t1: Date.now() };
}

const writes: Array<[string, string, string, unknown]> = [
  ['an add', 'POST', '/v1/sentences', { sentences: [{ text: 'Markets rallied after the announcement.' }] }],
  ['a delete', 'DELETE', '/v1/sentences/1', undefined],
  [
    'an annotation',
    'POST',
    '/v1/annotations',
    {
      s1: 'Boats stayed at the pier.',
      s2: 'The boats stayed tied up.',
      scheme: 'binary',
      decision: 'accept',
      annotator: 'ana',
    },
  ],
  ['a job', 'POST', '/v1/jobs', { k: 2 }],
];

for (const [what, method, path, body] of writes) {
  t.test(`${what}: the 2xx leaves after its flush`, async (t) => {
    const r = await timed(method, path, body);
    t.ok(r.status >= 200 && r.status < 300, `status ${r.status}`);
    t.ok(r.t1 - r.t0 >= DELAY_MS, `answered in ${r.t1 - r.t0} ms (each flush takes ${DELAY_MS} more)`);
    const inWindow = flushes().filter((f) => f >= r.t0 + DELAY_MS && f <= r.t1 + 1);
    t.ok(inWindow.length > 0, 'a flush that began after the request returned before the answer');
  });
}

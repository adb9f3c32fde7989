/**
 * Redis restarted in the middle of a distributed build (AOF on): the workers and the coordinator
 * reconnect and the build completes with nothing lost. And SIGTERM to a worker in the middle of a job:
 * it finishes that job (its output is published) and exits 0, taking no new one.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { buildIndex } from '../../src/indexer/build.js';
import { buildDistributed } from '../../src/queue/coordinator.js';
import { layout, markerPath } from '../../src/queue/layout.js';
import { contents, corpusWithDuplicates, needRedis, startRedis, startWorker } from '../helpers/queue.js';

const MODEL = 'all-minilm-l6-v2';

t.test('Redis restarted mid-build (AOF); a worker stopped with SIGTERM mid-job finishes it', async (t) => {
  if (!needRedis(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'paramine-queue-redis-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const corpus = corpusWithDuplicates(dir, 700);
  const common = { inputs: [corpus], model: MODEL, quiet: true, threads: 1 };
  const one = await buildIndex({ ...common, out: join(dir, 'one') });
  const aofDir = join(dir, 'redis');
  mkdirSync(aofDir);
  const first = await startRedis(t, { aofDir });
  const [a, b] = [
    startWorker(t, first.url, ['--threads', '1']),
    startWorker(t, first.url, ['--threads', '1']),
  ];
  const work = join(dir, 'work');
  const lines: string[] = [];
  const build = buildDistributed(
    { ...common, out: join(dir, 'dist') },
    { queue: first.url, work, chunkLines: 100, partitions: 4, pollMs: 50 },
    (l) => lines.push(l),
  );

  // SIGTERM to b while it embeds a chunk: it finishes that chunk and exits 0.
  const started = await b.waitFor(/embed (\S+) started/);
  const id = (/embed (\S+) started/.exec(started) as RegExpExecArray)[1] as string;
  b.child.kill('SIGTERM');
  const code = await new Promise((ok) => b.child.once('exit', (c) => ok(c)));
  t.equal(code, 0, 'the worker exits 0 after SIGTERM');
  t.match(
    b.log(),
    new RegExp(`SIGTERM: finishing active jobs[\\s\\S]*embed ${id} done`),
    'after finishing its job',
  );
  t.ok(
    existsSync(markerPath(layout.chunk(work, Number(id.split('-').at(-1))))),
    "that job's output is published",
  );

  // Redis restarted while a works through the remaining chunks.
  while (!existsSync(markerPath(layout.chunk(work, 2)))) await sleep(20);
  await first.stop();
  await sleep(500);
  await startRedis(t, { aofDir, port: first.port });
  const dist = await build;
  t.same(dist.counters, one.counters, 'counters as one process');
  t.same(await contents(join(dir, 'dist')), await contents(join(dir, 'one')), 'ids and texts as one process');
  t.match(a.log(), /embed \S+ done/, 'the other worker went on after the restart');
});

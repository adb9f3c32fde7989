/**
 * A distributed mining job (range jobs on real worker processes, real redis-server) writes the pairs
 * and clusters `paramine mine` writes for the same job, pair for pair; also with a worker SIGKILLed in
 * the middle of a range.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import t from 'tap';
import { buildIndex } from '../../src/indexer/build.js';
import { connectionOptions, parseQueueUrl, queueName } from '../../src/queue/connection.js';
import { layout } from '../../src/queue/layout.js';
import { mineDistributed, queueJobRunner } from '../../src/queue/mine.js';
import { openService } from '../../src/service/index.js';
import { corpusWithDuplicates, killMidJob, needRedis, startRedis, startWorker } from '../helpers/queue.js';

const MODEL = 'all-minilm-l6-v2';

t.test('distributed mining equals one-machine mining, also with a worker killed mid-range', async (t) => {
  if (!needRedis(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'paramine-queue-mine-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const index = join(dir, 'index');
  await buildIndex({
    inputs: [corpusWithDuplicates(dir, 700)],
    out: index,
    model: MODEL,
    quiet: true,
    threads: 1,
  });

  // The one-machine job, through the command line.
  const one = join(dir, 'one.jsonl');
  const args = ['--k', '5', '--min-cosine', '0.6', '--batch-size', '32', '--cluster'];
  const r = spawnSync(
    process.execPath,
    [
      ...process.execArgv,
      'src/cli.ts',
      'mine',
      '--index',
      index,
      '--out',
      one,
      '--quiet',
      '--faiss-threads',
      '1',
      ...args,
    ],
    { encoding: 'utf8' },
  );
  t.equal(r.status, 0, r.stderr);
  const pairs = readFileSync(one, 'utf8');
  t.ok(pairs.split('\n').length > 50, `${pairs.split('\n').length - 1} pairs mined`);

  const redis = await startRedis(t);
  const spec = { scope: { kind: 'all' as const }, k: 5, minCosine: 0.6, batchSize: 32, cluster: true };
  const common = {
    index,
    queue: redis.url,
    spec,
    reranker: false as const,
    rangeSize: 96,
    quiet: true,
    pollMs: 50,
  };
  const [a, b] = [startWorker(t, redis.url), startWorker(t, redis.url)];
  const out1 = join(dir, 'dist.jsonl');
  const s1 = await mineDistributed({ ...common, out: out1, work: join(dir, 'work1') });
  t.ok(s1.ranges >= 4, `${s1.queries} queries in ${s1.ranges} ranges of 96`);
  t.equal(readFileSync(out1, 'utf8'), pairs, 'the same pairs, in the same order, with the same fields');
  t.equal(
    readFileSync(join(dir, 'dist.clusters.jsonl'), 'utf8'),
    readFileSync(join(dir, 'one.clusters.jsonl'), 'utf8'),
    'the same clusters',
  );

  // Again in a fresh work dir, one worker killed in the middle of a range job.
  const target = parseQueueUrl(redis.url);
  const q = new Queue(queueName('mine'), { connection: connectionOptions(target), prefix: target.prefix });
  t.teardown(() => q.close());
  const work2 = join(dir, 'work2');
  const out2 = join(dir, 'killed.jsonl');
  // a and b paused, so the new worker c takes the first range; killed in it, then a and b go on.
  const c = startWorker(t, redis.url);
  await c.waitFor(/stages embed, dedup, fill, mine/);
  for (const w of [a, b]) w.child.kill('SIGSTOP');
  const running = mineDistributed({ ...common, out: out2, work: work2, rangeSize: 64 });
  const killed = await killMidJob(c, 'mine', q, (id) => {
    const [job, , r] = id.split('-');
    return layout.range(work2, job as string, Number(r));
  });
  for (const w of [a, b]) w.child.kill('SIGCONT');
  const s2 = await running;
  t.match(a.log() + b.log(), new RegExp(`mine ${killed} started`), 'the killed range ran again elsewhere');
  t.equal(s2.pairs, s1.pairs);
  t.equal(readFileSync(out2, 'utf8'), pairs, 'pair for pair, with a worker killed mid-range');

  // POST /v1/jobs on a service started with --queue: the job manager's runner is the queue's.
  const service = await openService({ index, reranker: false });
  t.teardown(() => service.close());
  const runner = queueJobRunner({
    queue: redis.url,
    work: join(dir, 'work3'),
    index,
    reranker: false,
    rangeSize: 96,
  });
  const { manager, store } = service.openJobs({ dir: join(dir, 'jobs'), runner });
  const created = await manager.create(spec);
  const end = await manager.wait(created.id, undefined, 50);
  t.equal(end.state, 'done');
  t.equal(end.processed, end.total);
  const served = [...store.pairs(created.id)].map(({ seq, pair }) => `${JSON.stringify({ seq, ...pair })}\n`);
  t.equal(served.join(''), pairs, "the service's job stores the one-machine pairs");
  t.equal(end.clusters, readFileSync(join(dir, 'one.clusters.jsonl'), 'utf8').split('\n').length - 1);

  // Cancelled while its ranges wait (every worker stopped): it ends at once, its ranges leave the queue.
  for (const w of [a, b]) w.child.kill('SIGSTOP');
  const waiting = await manager.create(spec);
  const queued = async () => (await q.getJobCounts('waiting')).waiting ?? 0;
  for (let i = 0; i < 200 && (await queued()) === 0; i++) await sleep(50);
  t.ok((await queued()) > 0, 'its ranges are queued');
  const asked = Date.now();
  await manager.cancel(waiting.id);
  const cancelled = await manager.wait(waiting.id, undefined, 50);
  t.equal(cancelled.state, 'cancelled');
  t.ok(Date.now() - asked < 5000, `cancelled in ${Date.now() - asked} ms with no worker running`);
  t.equal(await queued(), 0, 'its range jobs left the queue');
  for (const w of [a, b]) w.child.kill('SIGCONT');
});

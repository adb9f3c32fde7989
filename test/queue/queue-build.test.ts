/**
 * A distributed build (real redis-server on a random loopback port, three real `paramine worker`
 * processes) equals the one-process build of the same corpus: counters, ids, texts, metadata, vectors
 * and the top-10 of 100 queries. Needs redis-server (scripts/setup); skipped with the reason when it is
 * missing, except under CI=true, where that fails.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import t from 'tap';
import { Encoder } from '../../src/encode/index.js';
import { buildIndex } from '../../src/indexer/build.js';
import { connectionOptions, parseQueueUrl, queueName } from '../../src/queue/connection.js';
import { buildDistributed } from '../../src/queue/coordinator.js';
import { QueueMetrics } from '../../src/queue/metrics.js';
import {
  contents,
  corpusWithDuplicates,
  needRedis,
  startRedis,
  startWorker,
  topTen,
} from '../helpers/queue.js';

const MODEL = 'all-minilm-l6-v2';

t.test('three workers build the index the one-process build builds', async (t) => {
  if (!needRedis(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'paramine-queue-build-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const corpus = corpusWithDuplicates(dir, 1200);
  const common = {
    inputs: [corpus],
    model: MODEL,
    minTokens: 2,
    factory: 'IVF16,Flat',
    quiet: true,
    threads: 1,
  };
  const one = await buildIndex({ ...common, out: join(dir, 'one') });
  t.ok(one.counters.duplicates > 100, `${one.counters.duplicates} duplicates in the corpus`);

  const redis = await startRedis(t);
  const workers = [0, 1, 2].map((i) =>
    startWorker(t, redis.url, ['--threads', '1', ...(i === 0 ? ['--metrics-port', '0'] : [])]),
  );
  const lines: string[] = [];
  const dist = await buildDistributed(
    { ...common, out: join(dir, 'dist') },
    { queue: redis.url, work: join(dir, 'work'), chunkLines: 150, partitions: 4, pieceSize: 250, pollMs: 50 },
    (l) => lines.push(l),
  );
  t.equal(dist.chunks, 8, '1200 lines in chunks of 150');
  t.same(dist.counters, one.counters, 'the same counters (read, kept, duplicates, filtered)');
  t.equal(dist.vectors, one.vectors);
  t.equal(dist.factory, one.factory);
  t.same(await contents(join(dir, 'dist')), await contents(join(dir, 'one')), 'ids, texts and metadata');
  const a = readFileSync(join(dir, 'one', 'vectors.f16'));
  const b = readFileSync(join(dir, 'dist', 'vectors.f16'));
  t.equal(b.length, a.length, 'vectors.f16 of the same size');
  t.ok(a.equals(b), 'vectors.f16 byte for byte');
  const encoder = await Encoder.open(`models/${MODEL}`);
  t.same(
    await topTen(join(dir, 'dist'), encoder),
    await topTen(join(dir, 'one'), encoder),
    'top-10 of 100 queries',
  );
  await encoder.close();

  // Prometheus: the worker's own counters, and the queue's depth per stage and state.
  const port = /metrics on :(\d+)/.exec(workers[0]?.log() ?? '')?.[1];
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const embedded = /paramine_worker_jobs_total\{stage="embed",outcome="completed"\} (\d+)/.exec(text)?.[1];
  t.ok(Number(embedded) >= 1, `worker 0 reports ${embedded} embed jobs completed`);
  t.match(text, /paramine_worker_items_total\{stage="embed"\} \d+/);
  const target = parseQueueUrl(redis.url);
  const queue = new Queue(queueName('embed'), {
    connection: connectionOptions(target),
    prefix: target.prefix,
  });
  const metrics = new QueueMetrics(new Map([['embed', queue]]));
  t.match(await metrics.registry.metrics(), /paramine_queue_jobs\{stage="embed",state="completed"\} 8/);
  await queue.close();

  // Every worker took part, and each stops cleanly on SIGTERM.
  for (const w of workers) t.match(w.log(), /embed \S+ done/, 'the worker ran embed jobs');
  for (const w of workers) {
    w.child.kill('SIGTERM');
    const code = await new Promise((ok) => w.child.once('exit', (c) => ok(c)));
    t.equal(code, 0, 'SIGTERM: the worker finishes and exits 0');
  }
});

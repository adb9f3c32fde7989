/**
 * Failures of a distributed build, with a real redis-server and real worker processes: a worker
 * SIGKILLed in the middle of an embed job and another in the middle of a fill job (their jobs are taken
 * up by the survivor after the lock expires: --lock-ms 2000, --stalled-ms 1000), and a poisoned chunk
 * (an invalid JSON line) that fails after its retries with an error naming it, or is given up with
 * onFailedChunk 'skip'.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import t from 'tap';
import { buildIndex } from '../../src/indexer/build.js';
import { connectionOptions, parseQueueUrl, queueName } from '../../src/queue/connection.js';
import { buildDistributed } from '../../src/queue/coordinator.js';
import { layout, markerPath } from '../../src/queue/layout.js';
import { syntheticSentence } from '../helpers/corpus.js';
import {
  contents,
  corpusWithDuplicates,
  killMidJob,
  needRedis,
  startRedis,
  startWorker,
} from '../helpers/queue.js';

const MODEL = 'all-minilm-l6-v2';

t.test(
  'workers SIGKILLed mid-embed and mid-fill: the build completes, nothing lost or duplicated',
  async (t) => {
    if (!needRedis(t)) return;
    const dir = mkdtempSync(join(tmpdir(), 'paramine-queue-crash-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const corpus = corpusWithDuplicates(dir, 900);
    const common = {
      inputs: [corpus],
      model: MODEL,
      minTokens: 2,
      factory: 'IVF8,Flat',
      quiet: true,
      threads: 1,
    };
    const one = await buildIndex({ ...common, out: join(dir, 'one') });

    const redis = await startRedis(t);
    const target = parseQueueUrl(redis.url);
    const queue = (s: 'embed' | 'fill') =>
      new Queue(queueName(s), { connection: connectionOptions(target), prefix: target.prefix });
    const embedQ = queue('embed');
    const fillQ = queue('fill');
    t.teardown(async () => {
      await embedQ.close();
      await fillQ.close();
    });
    const work = join(dir, 'work');
    const start = () => startWorker(t, redis.url, ['--threads', '1']);
    const [a, b, c] = [start(), start(), start()];
    const build = buildDistributed(
      { ...common, out: join(dir, 'dist') },
      { queue: redis.url, work, chunkLines: 150, partitions: 3, pieceSize: 20, pollMs: 50 },
    );
    const chunkOf = (id: string) => layout.chunk(work, Number(id.split('-').at(-1)));
    const pieceOf = (id: string) => {
      const [s, p] = id.split('-').slice(-2).map(Number);
      return layout.piece(work, s as number, p as number);
    };
    const embedKilled = await killMidJob(a, 'embed', embedQ, chunkOf);
    const fillKilled = await killMidJob(b, 'fill', fillQ, pieceOf);
    const dist = await build;

    t.match(
      b.log() + c.log(),
      new RegExp(`embed ${embedKilled} started`),
      'another worker took the killed embed job up',
    );
    t.match(b.log() + c.log(), new RegExp(`${embedKilled} stalled`), 'found stalled (not failed)');
    t.match(c.log(), new RegExp(`fill ${fillKilled} started`), 'the survivor took the fill job up');
    t.same(dist.counters, one.counters, 'counters as one process');
    t.equal(dist.vectors, one.vectors, 'no vector lost or duplicated');
    t.same(
      await contents(join(dir, 'dist')),
      await contents(join(dir, 'one')),
      'ids and texts as one process',
    );
  },
);

t.test(
  'a poisoned chunk fails after its retries, naming the chunk; with skip the rest goes on',
  async (t) => {
    if (!needRedis(t)) return;
    const dir = mkdtempSync(join(tmpdir(), 'paramine-queue-poison-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const lines = Array.from({ length: 300 }, (_, i) => JSON.stringify({ text: syntheticSentence(i) }));
    lines[170] = '{"text": "a broken line';
    const corpus = join(dir, 'poisoned.jsonl');
    writeFileSync(corpus, `${lines.join('\n')}\n`);
    const redis = await startRedis(t);
    startWorker(t, redis.url, ['--threads', '1']);
    const common = { inputs: [corpus], model: MODEL, quiet: true, threads: 1, factory: 'Flat' };
    const q = { queue: redis.url, chunkLines: 100, partitions: 2, pollMs: 50 };
    await t.rejects(
      buildDistributed({ ...common, out: join(dir, 'stop') }, { ...q, work: join(dir, 'work-stop') }),
      {
        code: 'BAD_FILE',
        message:
          /embed job for chunk 1 \(.*poisoned\.jsonl bytes \d+\.\.\d+, lines 101\.\.\) failed after 3 attempts: .*poisoned\.jsonl:171: invalid JSON/,
      },
    );
    const skipped = await buildDistributed(
      { ...common, out: join(dir, 'skip') },
      { ...q, work: join(dir, 'work-skip'), onFailedChunk: 'skip' },
    );
    t.same(skipped.skipped, [1], 'chunk 1 given up');
    t.equal(skipped.vectors, 200, 'the other chunks are in the index');
  },
);

t.test('a coordinator SIGKILLed mid-build resumes from the work dir and Redis', async (t) => {
  if (!needRedis(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'paramine-queue-resume-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const corpus = corpusWithDuplicates(dir, 600);
  const one = await buildIndex({
    inputs: [corpus],
    out: join(dir, 'one'),
    model: MODEL,
    quiet: true,
    threads: 1,
  });
  const redis = await startRedis(t);
  startWorker(t, redis.url, ['--threads', '1']);
  const work = join(dir, 'work');
  const args = [
    'dist/cli.js',
    'index',
    '--queue',
    redis.url,
    '--work',
    work,
    '--input',
    corpus,
    '--out',
    join(dir, 'dist'),
    '--chunk-lines',
    '100',
    '--threads',
    '1',
    '--quiet',
  ];
  const first = spawn(process.execPath, args, { stdio: 'ignore' });
  // Killed once the first chunk is embedded (the others are queued or running).
  while (!existsSync(markerPath(layout.chunk(work, 0)))) await sleep(20);
  first.kill('SIGKILL');
  await new Promise((ok) => first.once('exit', ok));
  t.notOk(existsSync(join(dir, 'dist', 'manifest.json')), 'the first coordinator did not finish');
  const second = spawnSync(process.execPath, args, { encoding: 'utf8' });
  t.equal(second.status, 0, second.stderr);
  t.match(second.stdout, /\(resumed\)/, 'the second coordinator resumed the build');
  t.same(await contents(join(dir, 'dist')), await contents(join(dir, 'one')), 'ids and texts as one process');
  t.equal(readFileSync(join(dir, 'dist', 'vectors.f16')).length, one.vectors * 384 * 2);
});

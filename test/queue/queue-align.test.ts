/**
 * `docs align --queue`: the document search split into shares run by real worker processes (real
 * redis-server) writes the pairs `docs align` writes on one machine, byte for byte; every worker took a
 * share; the work directory is gone afterwards; --queue without --work is refused with the fix.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { buildIndex } from '../../src/indexer/build.js';
import { mineDistributed } from '../../src/queue/mine.js';
import { madeUpDocuments } from '../helpers/made-up-documents.js';
import { needRedis, startRedis, startWorker } from '../helpers/queue.js';

/** Two search batches of 16,384 documents, so two shares. */
const DOCS = 20_000;

/** Documents of two 6-word sentences of made-up words; every 10th shares 8 words with the one before. */
function corpus(n: number): string {
  const sentence = (w: string[]) => `${w.join(' ')}.`;
  const docs = madeUpDocuments(n, 11).map((w) => `${sentence(w.slice(0, 6))} ${sentence(w.slice(6))}`);
  return `${docs.join('\n\n')}\n`;
}

/** The command run without blocking the test's event loop (two at once). */
function cliAsync(args: string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['dist/cli.js', 'docs', 'align', ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('close', (status) => done({ status, stderr }));
  });
}

const cli = (args: string[]) =>
  spawnSync(process.execPath, ['dist/cli.js', 'docs', 'align', ...args], { encoding: 'utf8' });

t.test('docs align --queue writes what one machine writes, each worker searching a share', async (t) => {
  if (!needRedis(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'paramine-queue-align-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const text = join(dir, 'docs.txt');
  writeFileSync(text, corpus(DOCS));
  const index = join(dir, 'index');
  await buildIndex(
    { inputs: [text], out: index, model: 'test/fixtures/tiny-encoder', documents: true, quiet: true },
    () => {},
  );
  const common = ['--index', index, '--partners', '1', '--dim', '64'];

  const one = join(dir, 'one.jsonl');
  const r1 = cli([...common, '--out', one]);
  t.equal(r1.status, 0, r1.stderr);
  const pairs = readFileSync(one, 'utf8');
  t.ok(pairs.split('\n').length > 1000, `one machine: ${pairs.split('\n').length - 1} document pairs`);

  const refused = cli([...common, '--out', join(dir, 'x.jsonl'), '--queue', 'redis://127.0.0.1:1/0']);
  t.not(refused.status, 0, '--queue without --work is refused');
  t.match(refused.stderr, /--queue needs --work/);

  const redis = await startRedis(t);
  // One worker taking two jobs at once: the two shares search with one prepared copy of the documents.
  const workers = [startWorker(t, redis.url, ['--stages', 'align,mine', '--concurrency', '2'])];
  const work = join(dir, 'work');
  const out = join(dir, 'dist.jsonl');
  const r2 = cli([...common, '--out', out, '--queue', redis.url, '--work', work, '--share-size', '16384']);
  t.equal(r2.status, 0, r2.stderr);
  t.equal(readFileSync(out, 'utf8'), pairs, 'the same pairs, in the same order, with the same scores');
  t.notOk(existsSync(work), 'the work directory is removed once the pairs are written');
  // The workers' logs are read as their output arrives (the coordinator ran synchronously).
  await sleep(200);
  const started = () => workers.map((w) => (w.log().match(/align \S+ started/g) ?? []).length);
  const shares = started().reduce((a, b) => a + b, 0);
  t.ok(shares >= 2, `the two shares were searched by the worker (${shares} jobs)`);
  // Both shares started before either was done: the one prepared copy searched twice at once.
  const events = (workers[0]?.log() ?? '').split('\n').filter((l) => /-align-\d+ (started|done)/.test(l));
  const firstDone = events.findIndex((l) => l.endsWith(' done'));
  t.ok(firstDone >= 2, `both at once (${events.join('; ')})`);
  // Two runs at once on that worker (two work directories): neither's prepared documents are closed while
  // the other's shares search.
  const both = await Promise.all(
    ['w1', 'w2'].map((w) =>
      cliAsync([...common, '--out', join(dir, `${w}.jsonl`), '--queue', redis.url, '--work', join(dir, w)]),
    ),
  );
  for (const [i, r] of both.entries()) {
    t.equal(r.status, 0, r.stderr);
    t.equal(
      readFileSync(join(dir, `w${i + 1}.jsonl`), 'utf8'),
      pairs,
      `run ${i + 1} of two at once: the same pairs`,
    );
  }
  workers.push(startWorker(t, redis.url, ['--stages', 'align,mine']));
  // Mining within the pairs (a smaller index with a model the workers find): from the file on one machine,
  // from the file on the workers, and aligned by the job itself (once, its search on the workers, then
  // every range reads the pairs).
  const small = join(dir, 'small.txt');
  writeFileSync(small, corpus(1500));
  const index2 = join(dir, 'index2');
  await buildIndex(
    { inputs: [small], out: index2, model: 'all-minilm-l6-v2', documents: true, quiet: true, threads: 1 },
    () => {},
  );
  const pairsFile = join(dir, 'small-pairs.jsonl');
  const r3 = cli(['--index', index2, '--partners', '1', '--dim', '64', '--out', pairsFile]);
  t.equal(r3.status, 0, r3.stderr);
  const mined = join(dir, 'mined-one.jsonl');
  const spec = ['--k', '3', '--min-cosine', '0', '--batch-size', '256'];
  const m1 = spawnSync(
    process.execPath,
    ['dist/cli.js', 'mine', '--index', index2, '--out', mined, '--doc-pairs', pairsFile, '--quiet', ...spec],
    { encoding: 'utf8' },
  );
  t.equal(m1.status, 0, m1.stderr);
  const minedPairs = readFileSync(mined, 'utf8');
  t.ok(
    minedPairs.split('\n').length > 100,
    `${minedPairs.split('\n').length - 1} pairs within the document pairs`,
  );
  const viaFile = join(dir, 'mined-file.jsonl');
  const m2 = spawnSync(
    process.execPath,
    [
      'dist/cli.js',
      'mine',
      '--index',
      index2,
      '--out',
      viaFile,
      '--doc-pairs',
      pairsFile,
      '--queue',
      redis.url,
      '--work',
      join(dir, 'mine-work'),
      '--range-size',
      '1024',
      '--quiet',
      ...spec,
    ],
    { encoding: 'utf8' },
  );
  t.equal(m2.status, 0, m2.stderr);
  t.equal(readFileSync(viaFile, 'utf8'), minedPairs, 'mine --queue --doc-pairs: the workers read the file');
  const aligned = join(dir, 'mined-aligned.jsonl');
  const s = await mineDistributed({
    index: index2,
    out: aligned,
    queue: redis.url,
    work: join(dir, 'mine-work-2'),
    spec: { k: 3, minCosine: 0, batchSize: 256, docPairs: { align: { partners: 1, dim: 64 } } },
    reranker: false,
    rangeSize: 1024,
    quiet: true,
    pollMs: 50,
  });
  t.ok(s.ranges >= 2, `${s.ranges} ranges`);
  t.equal(readFileSync(aligned, 'utf8'), minedPairs, 'a job that aligns its documents: the same pairs');
  await sleep(200);
  const after = started().reduce((a, b) => a + b, 0);
  t.ok(after > shares, `the job's alignment was searched on the workers too (${after - shares} align job)`);
  for (const w of workers) t.notMatch(w.log(), /stalled|failed|error/, 'no job stalled or failed');
  for (const w of workers) w.child.kill('SIGTERM');
});

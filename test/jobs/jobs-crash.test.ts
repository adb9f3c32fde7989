/**
 * Jobs survive a crash: `paramine serve` is killed with SIGKILL mid-job (a real child process),
 * started again on the same job directory, resumes the job on its own and ends with exactly the pairs
 * of an uninterrupted run. `paramine mine` (the CLI front end) gives the same pairs too.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { spawnServe } from '../../src/testing/index.js';
import { startTestService } from '../helpers/service.js';

const svc = await startTestService(1200, false);
t.teardown(() => svc.close());
const spec = { k: 8, margin: { k: 4 }, minCosine: 0.3, batchSize: 4, cluster: true };

const reference = await svc.jobs.wait((await svc.jobs.create(spec)).id, undefined, 20);
const referencePairs = [...svc.jobStore.pairs(reference.id)].map(({ seq, pair }) => ({ seq, ...pair }));
const referenceClusters = [...svc.jobStore.clusters(reference.id)];

function cli(args: string[]): ChildProcess {
  return spawn(process.execPath, ['dist/cli.js', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Starts `paramine serve` on the test index with `jobsDir`. */
const serve = (jobsDir: string) =>
  spawnServe([
    'dist/cli.js',
    'serve',
    '--index',
    svc.index,
    '--jobs-dir',
    jobsDir,
    '--no-reranker',
    '--log-level',
    'info',
  ]);

interface JobJson {
  id: string;
  state: string;
  processed: number;
  total: number;
  pairs: number;
}

const getJob = async (url: string, id: string) =>
  (await (await fetch(`${url}/v1/jobs/${id}`)).json()) as JobJson;

t.test('kill -9 mid-job, restart: the job resumes and its pairs equal an uninterrupted run', async (t) => {
  const jobsDir = join(svc.dir, 'crash-jobs');
  const first = await serve(jobsDir);
  const res = await fetch(`${first.url}/v1/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(spec),
  });
  t.equal(res.status, 202);
  const { id } = (await res.json()) as JobJson;
  let seen: JobJson;
  do {
    await new Promise((r) => setTimeout(r, 20));
    seen = await getJob(first.url, id);
  } while (seen.processed < 40);
  first.child.kill('SIGKILL');
  await once(first.child, 'exit');
  t.ok(seen.processed < seen.total, `killed mid-job (${seen.processed}/${seen.total} sentences done)`);

  const second = await serve(jobsDir);
  t.teardown(() => second.child.kill('SIGKILL'));
  let after: JobJson;
  do {
    await new Promise((r) => setTimeout(r, 50));
    after = await getJob(second.url, id);
  } while (after.state === 'running' || after.state === 'queued');
  t.equal(after.state, 'done', 'resumed on start and finished');
  t.ok(after.processed === after.total);
  const body = await (await fetch(`${second.url}/v1/jobs/${id}/results`)).text();
  const pairs = body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);
  t.equal(pairs.length, referencePairs.length, `${pairs.length} pairs, as uninterrupted`);
  t.same(pairs, referencePairs, 'the same pairs in the same order: none lost, none twice');
  const clusters = (await (await fetch(`${second.url}/v1/jobs/${id}/clusters`)).text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);
  t.same(clusters, referenceClusters, 'the same clusters');
  await second.stop();
});

t.test('paramine mine writes the same pairs and clusters as the job API', async (t) => {
  const out = join(svc.dir, 'pairs.jsonl');
  const child = cli([
    'mine',
    '--index',
    svc.index,
    '--out',
    out,
    '--k',
    '8',
    '--margin-k',
    '4',
    '--min-cosine',
    '0.3',
    '--batch-size',
    '4',
    '--cluster',
    '--quiet',
    // The service keeps BLAS on one thread; OpenBLAS rounds differently with another thread count.
    '--faiss-threads',
    '1',
  ]);
  let stdout = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  const [code] = (await once(child, 'exit')) as [number];
  t.equal(code, 0, stdout);
  t.match(stdout, new RegExp(`${referencePairs.length} pairs from 1\\d{3} sentences`));
  const lines = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { seq: number });
  // Same batch size, same FAISS batches, same BLAS thread count: bit-identical scores (20+ query batches
  // go through BLAS sgemm, whose rounding depends on both).
  t.same(lines, referencePairs);
  const clusters = readFileSync(join(svc.dir, 'pairs.clusters.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { seq: number; ids: number[]; texts: string[] });
  t.same(
    clusters.map(({ seq, ids }) => ({ seq, ids })),
    referenceClusters,
  );
  t.equal(clusters[0]?.texts.length, clusters[0]?.ids.length, 'clusters carry their texts');
});

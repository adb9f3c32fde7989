/**
 * SIGTERM on a real `paramine serve`: requests in flight are answered, new ones are refused, the running
 * job pauses at a committed batch (and resumes on the next start), the stores are closed (their lock
 * files are gone) and the process exits 0 within the request timeout.
 */
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { JobStore } from '../../src/jobs/index.js';
import { LOCK_FILE } from '../../src/store/index.js';
import { spawnServe } from '../../src/testing/index.js';
import { startTestService } from '../helpers/service.js';

const svc = await startTestService(1200, false);
t.teardown(() => svc.close());
const spec = { k: 8, margin: { k: 4 }, minCosine: 0.3, batchSize: 4 };

const serve = (jobsDir: string) =>
  spawnServe([
    // The built CLI, as deployed (tap's TypeScript loader hooks slow a child's shutdown down).
    'dist/cli.js',
    ...['serve', '--index', svc.index, '--jobs-dir', jobsDir, '--annotations-dir', join(jobsDir, 'ann')],
    ...['--no-reranker', '--log-level', 'info', '--timeout-ms', '5000'],
  ]);

const post = (url: string, path: string, body: unknown) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

t.test('SIGTERM drains requests, pauses the job, closes the stores, exits 0', async (t) => {
  const jobsDir = join(svc.dir, 'term-jobs');
  const server = await serve(jobsDir);
  let logs = '';
  server.child.stdout?.on('data', (d: Buffer) => {
    logs += d.toString();
  });
  const { id } = (await (await post(server.url, '/v1/jobs', spec)).json()) as { id: string };
  let job: { processed: number; total: number; state: string };
  do {
    await new Promise((r) => setTimeout(r, 20));
    job = (await (await fetch(`${server.url}/v1/jobs/${id}`)).json()) as typeof job;
  } while (job.processed < 20);
  const texts = Array.from({ length: 16 }, (_, i) => `a sentence in flight number ${i}`);
  const inFlight = texts.map((text) => post(server.url, '/v1/search', { text, k: 5 }));
  await new Promise((r) => setTimeout(r, 30));
  const t0 = Date.now();
  const exited = once(server.child, 'exit');
  server.child.kill('SIGTERM');
  const answers = await Promise.allSettled(inFlight);
  const statuses = answers.map((a) => (a.status === 'fulfilled' ? a.value.status : 'refused'));
  t.ok(
    statuses.every((s) => s === 200 || s === 503 || s === 'refused'),
    `in flight: ${JSON.stringify(statuses)}`,
  );
  t.ok(statuses.filter((s) => s === 200).length >= 1, 'requests accepted before the signal were answered');
  const [code] = (await exited) as [number | null];
  const steps = logs.split('\n').filter((l) => /shutting|paused|closed|shutdown/.test(l));
  t.equal(code, 0, `exit code 0\n${steps.join('\n')}`);
  t.ok(Date.now() - t0 < 10_000, `stopped in ${Date.now() - t0} ms (< request timeout + grace)`);
  await t.rejects(fetch(`${server.url}/healthz`), 'no longer listening');
  t.notOk(existsSync(join(jobsDir, LOCK_FILE)), 'job store closed (lock released)');
  t.notOk(existsSync(join(jobsDir, 'ann', LOCK_FILE)), 'annotation store closed (lock released)');

  const store = JobStore.open(jobsDir, { reader: true });
  const paused = store.get(id);
  await store.close();
  t.equal(paused?.state, 'running', 'the job was paused, not failed');
  t.ok(
    (paused?.processed ?? 0) < (paused?.total ?? 0),
    `checkpointed at ${paused?.processed}/${paused?.total}`,
  );

  const again = await serve(jobsDir);
  t.teardown(() => again.stop());
  do {
    await new Promise((r) => setTimeout(r, 50));
    job = (await (await fetch(`${again.url}/v1/jobs/${id}`)).json()) as typeof job;
  } while (job.state === 'running' || job.state === 'queued');
  t.equal(job.state, 'done', 'resumed after the restart and finished');
});

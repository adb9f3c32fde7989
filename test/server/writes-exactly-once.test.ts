/**
 * Exactly once per text and per client id, decided inside the write transaction: concurrent POSTs of one
 * sentence with one client id (a client retrying after timeouts) get one id, one `added` and the rest
 * `retried`; concurrent copies of one text without an id get one id; and `paramine add` processes writing
 * the same sentence beside the service while it takes the same POSTs agree on that one id.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startTestService } from '../helpers/service.js';

const s = await startTestService(100, false, { seal: { follow: true } });
t.teardown(() => s.close());
const app = s.app();

interface Outcome {
  id: number;
  status: 'added' | 'duplicate' | 'retried';
}

async function post(sentences: object[]): Promise<Outcome[]> {
  const res = await app.inject({ method: 'POST', url: '/v1/sentences', payload: { sentences } });
  if (res.statusCode !== 200 && res.statusCode !== 201) throw new Error(`${res.statusCode} ${res.body}`);
  return (res.json() as { sentences: Outcome[] }).sentences;
}

const count = (xs: Outcome[], status: Outcome['status']) => xs.filter((x) => x.status === status).length;

t.test('16 concurrent POSTs of one sentence with one client id: one id, once added', async (t) => {
  const text = 'The harbour reopened after the storm, the port authority said on Friday.';
  const all = (await Promise.all(Array.from({ length: 16 }, () => post([{ text, id: 'retry-1' }])))).flat();
  t.equal(new Set(all.map((x) => x.id)).size, 1, 'one id');
  t.equal(count(all, 'added'), 1, 'added once');
  t.equal(count(all, 'retried'), 15, 'the rest retried');
});

t.test('8 concurrent copies of one text without an id: one id', async (t) => {
  const text = 'Rail workers called off the strike planned for next week.';
  const all = (await Promise.all(Array.from({ length: 8 }, () => post([{ text }])))).flat();
  t.equal(new Set(all.map((x) => x.id)).size, 1, 'one id');
  t.equal(count(all, 'added'), 1);
  t.equal(count(all, 'duplicate'), 7);
});

t.test('paramine add processes and the API together: one id for one client id', async (t) => {
  const text = 'The city council approved the new cycling lanes by a wide margin.';
  const file = join(s.dir, 'retry.jsonl');
  writeFileSync(file, `${JSON.stringify({ id: 'retry-2', text })}\n`);
  const clis = Array.from(
    { length: 4 },
    () =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [...process.execArgv, 'src/cli.ts', 'add', '--index', s.index, '--input', file, '--quiet'],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
        });
        child.stderr.on('data', (d) => {
          out += d;
        });
        child.on('exit', (code) =>
          code === 0 ? resolve(out) : reject(new Error(`paramine add: ${code}\n${out}`)),
        );
      }),
  );
  // POSTs of the same sentence while the processes start and write (each takes a few seconds to load).
  const api: Outcome[] = [];
  let running = true;
  const done = Promise.all(clis).finally(() => {
    running = false;
  });
  while (running) {
    api.push(
      ...(await Promise.all([post([{ text, id: 'retry-2' }]), post([{ text, id: 'retry-2' }])])).flat(),
    );
    await new Promise((r) => setTimeout(r, 50));
  }
  const outputs = await done;
  const ids = new Set(api.map((x) => x.id));
  t.equal(ids.size, 1, `the API's ${api.length} answers name one id`);
  const cliAdded = outputs.map((o) => Number(/(\d+) sentences added/.exec(o)?.[1] ?? Number.NaN));
  t.ok(
    cliAdded.every((n) => n === 0 || n === 1),
    `each paramine add added 0 or 1 (${cliAdded.join(', ')})`,
  );
  const addedTimes = count(api, 'added') + cliAdded.reduce((a, b) => a + b, 0);
  t.equal(addedTimes, 1, 'added once over every writer');
  const [id] = [...ids];
  t.equal(s.service.store.get(id as number)?.text, text, 'the id holds the sentence');
});

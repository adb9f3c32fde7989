/**
 * Paced refusals: a refusal is answered at once, then its connection is not read for 50 ms, doubling up to
 * the cap while refusals keep coming; other connections are not held. Real sockets: the hold stops the
 * connection's reads in the kernel, which only a real connection shows.
 */
import http from 'node:http';
import Fastify from 'fastify';
import t, { type Test } from 'tap';
import { answerError } from '../../src/errors.js';
import { RefusalPacer } from '../../src/server/pacing.js';

async function serve(t: Test, paceMs: number) {
  const app = Fastify();
  const pacer = new RefusalPacer(paceMs);
  let refusing = true;
  app.post('/work', async (_req, reply) => {
    if (!refusing) return { ok: true };
    pacer.refuse(reply, answerError('OVERLOADED', 'busy; retry later', { retryAfterSeconds: 2 }));
    return undefined;
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  const { port } = app.server.address() as { port: number };
  return { port, admit: () => (refusing = false) };
}

/** One request on `agent`'s connection: its status, body, Retry-After and milliseconds. */
function post(port: number, agent: http.Agent) {
  const t0 = performance.now();
  return new Promise<{ status: number; body: string; retryAfter?: string; ms: number }>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/work',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body,
            retryAfter: res.headers['retry-after'],
            ms: performance.now() - t0,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end('{"text":"a"}');
  });
}

t.test(
  'a refused connection waits longer before each next request, up to the cap; others do not',
  async (t) => {
    const { port, admit } = await serve(t, 120);
    const a = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const b = new http.Agent({ keepAlive: true, maxSockets: 1 });
    t.teardown(() => {
      a.destroy();
      b.destroy();
    });
    await post(port, a); // connect and warm up: the first refusal is answered at once
    const first = await post(port, b);
    t.equal(first.status, 503);
    t.same(JSON.parse(first.body), { code: 'OVERLOADED', message: 'busy; retry later' });
    t.equal(first.retryAfter, '2');
    t.ok(first.ms < 40, `a connection's first refusal at once (${first.ms.toFixed(0)} ms)`);
    // The hold runs from the refusal's answer, so a request sent a little later waits a little less.
    const waits = [];
    for (let i = 0; i < 4; i++) waits.push((await post(port, a)).ms);
    t.ok((waits[0] as number) >= 25, `then 50 ms (${waits[0]})`);
    t.ok((waits[1] as number) >= 90, `then 100 ms (${waits[1]})`);
    t.ok((waits[3] as number) >= 105 && (waits[3] as number) < 300, `capped at 120 ms (${waits[3]})`);
    admit();
    const next = await post(port, a);
    t.equal(next.status, 200, 'the held request is served once read');
    t.ok(next.ms >= 90, `after its connection's hold (${next.ms.toFixed(0)} ms)`);
    const other = await post(port, b);
    t.ok(other.ms < 100, `another connection is not held as long (${other.ms.toFixed(0)} ms)`);
  },
);

t.test('pacing off: every refusal and the next request at once', async (t) => {
  const { port } = await serve(t, 0);
  const a = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => a.destroy());
  await post(port, a);
  for (let i = 0; i < 4; i++) {
    const r = await post(port, a);
    t.equal(r.status, 503);
    t.ok(r.ms < 40, `at once (${r.ms.toFixed(0)} ms)`);
  }
});

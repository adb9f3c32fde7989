/**
 * Backpressure on a real server (loopback HTTP, the real encoder, cross-encoder and index): far more
 * concurrent searches than the queues hold get 503 OVERLOADED with Retry-After at once instead of queueing
 * without bound, the queues never exceed their bounds, 200s resume when the burst is over, and requests
 * whose client hung up are dropped before they reach a model. No timing thresholds but a generous bound on
 * how long a refusal may take.
 */
import type { FastifyInstance } from 'fastify';
import t from 'tap';
import type { QueueName } from '../../src/service/index.js';
import { validateResponse } from '../helpers/openapi.js';
import { HAS_RERANKER, startTestService } from '../helpers/service.js';

const QUEUE = { encoder: 16, reranker: 64 };
const maxDepth: Record<QueueName, number> = { encoder: 0, reranker: 0, teacher: 0 };
const ranItems: Record<QueueName, number> = { encoder: 0, reranker: 0, teacher: 0 };
let onRerankDepth: (depth: number) => void = () => {};

const svc = await startTestService(200, HAS_RERANKER, {
  batch: { maxBatch: 8, maxWaitMs: 2, maxQueue: QUEUE.encoder },
  rerankBatch: { maxBatch: 32, maxWaitMs: 2, maxQueue: QUEUE.reranker },
  // As `paramine serve` runs: idle ONNX threads do not spin on the cores the event loop needs.
  spinning: false,
  // Observers beside the Prometheus hooks the helper installs.
  hooks: {
    onQueueDepth: (model, depth) => {
      maxDepth[model] = Math.max(maxDepth[model], depth);
      if (model === 'reranker') onRerankDepth(depth);
    },
    onBatch: (model, n) => {
      ranItems[model] += n;
    },
  },
});
const app: FastifyInstance = svc.app();
t.teardown(() => svc.close());
const url = await app.listen({ host: '127.0.0.1', port: 0 });

interface Answer {
  status: number;
  ms: number;
  retryAfter: string | null;
  code?: string;
}

async function search(i: number, signal?: AbortSignal): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: `wisdom and instruction, verse ${i}`, k: 5, candidates: 20 }),
    ...(signal ? { signal } : {}),
  });
  const text = await res.text();
  const body = JSON.parse(text) as { code?: string };
  if (res.status === 503)
    validateResponse('POST', '/v1/search', 503, res.headers.get('content-type') ?? '', text);
  return {
    status: res.status,
    ms: performance.now() - started,
    retryAfter: res.headers.get('retry-after'),
    ...(body.code === undefined ? {} : { code: body.code }),
  };
}

t.test('a burst far above capacity is refused quickly with Retry-After, then service recovers', async (t) => {
  const rssBefore = process.memoryUsage().rss;
  for (const burst of [1, 2]) {
    const encoded = ranItems.encoder;
    const answers = await Promise.all(Array.from({ length: 150 }, (_, i) => search(i)));
    const ok = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 503);
    t.equal(ok.length + refused.length, answers.length, `burst ${burst}: every answer is a 200 or a 503`);
    // A search admitted holds its rerank's place: none is refused after its encoding and search were spent.
    t.equal(ranItems.encoder - encoded, ok.length, `burst ${burst}: only the answered searches were encoded`);
    t.ok(ok.length > 0, `burst ${burst}: ${ok.length} answered`);
    t.ok(refused.length > 0, `burst ${burst}: ${refused.length} refused`);
    t.ok(
      refused.every((a) => a.code === 'OVERLOADED' && Number(a.retryAfter) >= 1),
      'each refusal is OVERLOADED with a Retry-After in seconds',
    );
    const ms = refused.map((a) => a.ms).sort((a, b) => a - b);
    const slowest = ms.at(-1) ?? 0;
    const median = ms[Math.floor(ms.length / 2)] ?? 0;
    const served = Math.max(...ok.map((a) => a.ms));
    t.ok(
      slowest < 15_000,
      `refusals come at once, not after queueing (median ${median.toFixed(0)} ms, slowest ${slowest.toFixed(0)} ms; slowest 200 ${served.toFixed(0)} ms)`,
    );
  }
  t.ok(maxDepth.encoder <= QUEUE.encoder, `encoder queue peaked at ${maxDepth.encoder} <= ${QUEUE.encoder}`);
  t.ok(
    maxDepth.reranker <= QUEUE.reranker,
    `reranker queue peaked at ${maxDepth.reranker} <= ${QUEUE.reranker}`,
  );
  t.ok(maxDepth.encoder > 0 && (maxDepth.reranker > 0 || !HAS_RERANKER), 'the queues did fill');
  const grown = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
  t.ok(grown < 512, `RSS grew ${grown.toFixed(0)} MiB over two bursts`);
  for (let i = 0; i < 5; i++) t.equal((await search(i)).status, 200, `request ${i} after the burst`);
  const metrics = await (await fetch(`${url}/metrics`)).text();
  t.match(metrics, /paramine_rejected_total\{model="(encoder|reranker)"\} [1-9]/);
  const ready = await fetch(`${url}/readyz`);
  t.equal(ready.status, 200, 'ready again');
});

t.test(
  'requests whose client hung up are dropped before the cross-encoder',
  { skip: !HAS_RERANKER && 'no reranker in models/' },
  async (t) => {
    const clients = Array.from({ length: 6 }, () => new AbortController());
    const before = ranItems.reranker;
    // Hang up as soon as two requests wait behind the running one: they are still queued.
    onRerankDepth = (depth) => {
      if (depth >= 40) for (const c of clients) c.abort();
    };
    const settled = await Promise.allSettled(clients.map((c, i) => search(100 + i, c.signal)));
    onRerankDepth = () => {};
    t.ok(
      settled.some((s) => s.status === 'rejected'),
      'clients hung up',
    );
    // Let the server notice the closed sockets and finish what was already running.
    await new Promise((r) => setTimeout(r, 1500));
    const dropped = await (await fetch(`${url}/metrics`)).text();
    const m = /paramine_dropped_total\{model="reranker"\} (\d+)/.exec(dropped);
    t.ok(m && Number(m[1]) >= 20, `dropped ${m?.[1]} queued pairs`);
    t.ok(
      ranItems.reranker - before < 6 * 20,
      `the cross-encoder ran ${ranItems.reranker - before} of ${6 * 20} pairs`,
    );
    t.equal((await search(0)).status, 200, 'the next request is answered');
  },
);

t.test(
  "a search that reranks is refused before its body is validated when the cross-encoder's queue is full; one that does not rerank is answered",
  { skip: !HAS_RERANKER && 'no reranker in models/' },
  async (t) => {
    const post = (path: string, body: unknown) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const pairs = Array.from({ length: QUEUE.reranker / 2 }, (_, i) => [
      `the wise son hears instruction ${i}`,
      `a wise child listens to teaching ${i}`,
    ]);
    // Once a classify batch runs and two more fill the queue to its bound, the cross-encoder cannot take
    // one more pair until the running batch is done.
    const full = new Promise<void>((resolve) => {
      onRerankDepth = (depth) => {
        if (depth >= QUEUE.reranker) resolve();
      };
    });
    const classify = [0, 1, 2].map(() => post('/v1/classify', { pairs }));
    await full;
    onRerankDepth = () => {};
    // k 0 is invalid (400 once validated): a 503 says the refusal came first.
    const [refused, plain] = await Promise.all([
      post('/v1/search', { text: 'wisdom and instruction', k: 0 }),
      post('/v1/search', { text: 'wisdom and instruction', k: 5, rerank: false }),
    ]);
    t.equal(refused.status, 503, 'the reranking search is refused');
    t.equal(((await refused.json()) as { code: string }).code, 'OVERLOADED');
    t.ok(Number(refused.headers.get('retry-after')) >= 1, 'with a Retry-After');
    t.equal(plain.status, 200, 'the search without rerank is answered');
    for (const r of await Promise.all(classify)) t.equal(r.status, 200, 'the classify calls are answered');
  },
);

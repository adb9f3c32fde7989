/**
 * Adds through the queue (issue #30): a service whose writes are embedded by `paramine worker`s (a real
 * Redis, a real worker process with the real MiniLM): without a worker a write is refused (503) and
 * nothing of it is stored; with one, added sentences are searchable at once, their vectors those the
 * service's own encoder gives; a worker with another model refuses the job, and the write with it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { Encoder } from '../../src/encode/index.js';
import { readManifest } from '../../src/index/index.js';
import { buildIndex } from '../../src/indexer/build.js';
import { resolveModelDir } from '../../src/models/resolve.js';
import { QueueEmbedder } from '../../src/queue/add.js';
import { searchOptionsSchema } from '../../src/search/types.js';
import { openService } from '../../src/service/index.js';
import { NEWS as NEW, NEWS_PARAPHRASE as QUERY, syntheticSentence } from '../helpers/corpus.js';
import { needRedis, startRedis, startWorker } from '../helpers/queue.js';

t.test('POST /v1/sentences embedded by paramine workers through the queue', async (t) => {
  if (!needRedis(t)) return;
  const dir = mkdtempSync(join(tmpdir(), 'paramine-queue-writes-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const corpus = join(dir, 'corpus.txt');
  writeFileSync(corpus, `${Array.from({ length: 300 }, (_, i) => syntheticSentence(i)).join('\n')}\n`);
  const index = join(dir, 'index');
  await buildIndex({ inputs: [corpus], out: index, model: 'all-minilm-l6-v2', quiet: true });
  const { model, dim } = await readManifest(index);
  const redis = await startRedis(t);

  // No worker yet: refused within the timeout, nothing stored.
  const service = await openService({
    index,
    reranker: false,
    writeEmbedder: await QueueEmbedder.open(redis.url, model, dim, 3000),
  });
  t.teardown(() => service.close());
  await t.rejects(service.writes.add([{ text: NEW }]), {
    code: 'UNAVAILABLE',
    message: /no paramine worker embedded this write within 3 s; start one with `paramine worker --queue/,
  });
  t.equal(service.writes.stats.added, 0, 'nothing of the refused write was stored');

  const worker = startWorker(t, redis.url, ['--stages', 'add']);
  await worker.waitFor(/stages add/);
  // The worker loads the model with its first job: warm it without the service's 3 s limit (a loaded
  // machine may take longer than that to open the model).
  const warm = await QueueEmbedder.open(redis.url, model, dim, 120_000);
  await warm.encode(['Warming up.']);
  await warm.close();
  const [added] = await service.writes.add([{ text: NEW }, { text: 'A late headline about the harbour.' }]);
  t.equal(added?.status, 'added');
  await worker.waitFor(/add \S+ done/);
  const found = await service.core.search([QUERY], searchOptionsSchema.parse({ k: 5, rerank: false }));
  t.equal(found.results[0]?.candidates[0]?.id, added?.id, 'searchable at once');

  const local = await Encoder.open(resolveModelDir('all-minilm-l6-v2'));
  t.teardown(() => local.close());
  const want = await local.encode([NEW]);
  const got = service.writes.added.vectors([added?.id as number]);
  let dot = 0;
  for (let i = 0; i < dim; i++) dot += (want[i] as number) * (got[i] as number);
  t.ok(dot > 0.9999, `the worker's vector is the service's own encoder's (cosine ${dot})`);

  // A worker serving another model (sha256 differs) fails the job for good: the write is refused.
  const wrong = await QueueEmbedder.open(redis.url, { id: model.id, sha256: '0'.repeat(64) }, dim, 20_000);
  t.teardown(() => wrong.close());
  await t.rejects(wrong.encode(['Another sentence.']), {
    code: 'UNAVAILABLE',
    message: /a worker failed to embed this write: .*MODEL_MISMATCH/,
  });
});

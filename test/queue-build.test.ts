/**
 * A distributed build (real redis-server on a random loopback port, three real `paramine worker`
 * processes) equals the one-process build of the same corpus: counters, ids, texts, metadata, vectors
 * and the top-10 of 100 queries. Needs redis-server (scripts/setup); skipped with the reason when it is
 * missing, except under CI=true, where that fails.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { Encoder } from '../src/encode/index.js';
import { ShardedIndex } from '../src/index/index.js';
import { buildIndex } from '../src/indexer/build.js';
import { buildDistributed } from '../src/queue/coordinator.js';
import { SentenceStore } from '../src/store/index.js';
import { syntheticSentence } from './helpers/corpus.js';
import { corpusWithDuplicates, needRedis, startRedis, startWorker } from './helpers/queue.js';

const MODEL = 'all-minilm-l6-v2';

/** Every (id, text, meta) of a built index, in id order. */
export async function contents(out: string) {
  const store = SentenceStore.open(join(out, 'store'), { readOnly: true });
  const rows = [...store.range(0, Number.MAX_SAFE_INTEGER)].map((r) => [r.id, r.record.text, r.record.meta]);
  await store.close();
  return rows;
}

/** The top-10 ids of 100 queries (sentences not in the corpus and from it). */
export async function topTen(out: string, encoder: Encoder): Promise<number[][]> {
  const index = await ShardedIndex.open(out, { model: { sha256: encoder.onnxSha256 }, dim: encoder.dim });
  const queries = Array.from({ length: 100 }, (_, i) => syntheticSentence(5000 + 37 * i));
  const { ids } = await index.search(await encoder.encode(queries), 10);
  await index.close();
  return Array.from({ length: 100 }, (_, q) => [...ids.subarray(q * 10, q * 10 + 10)].map(Number));
}

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
  const workers = [0, 1, 2].map(() => startWorker(t, redis.url, ['--threads', '1']));
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

  // Every worker took part, and each stops cleanly on SIGTERM.
  for (const w of workers) t.match(w.log(), /embed \S+ done/, 'the worker ran embed jobs');
  for (const w of workers) {
    w.child.kill('SIGTERM');
    const code = await new Promise((ok) => w.child.once('exit', (c) => ok(c)));
    t.equal(code, 0, 'SIGTERM: the worker finishes and exits 0');
  }
});

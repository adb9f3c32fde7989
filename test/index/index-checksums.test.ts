/**
 * The manifest's checksums at open: every byte under the 'auto' threshold, the size plus sampled blocks
 * above it (a 10^9 index cannot be re-read at every start), every byte again with 'full'.
 */

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { open as openFile, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { planForFactory, readManifest, ShardedIndex, VECTORS_FILE } from '../../src/index/index.js';
import { clusteredDataset, writeVectorIndex } from '../../src/testing/index.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-checksums-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** Flips one byte of `file` at `offset`. */
async function flip(file: string, offset: number): Promise<void> {
  const fh = await openFile(file, 'r+');
  const b = Buffer.alloc(1);
  await fh.read(b, 0, 1, offset);
  b[0] = (b[0] as number) ^ 0xff;
  await fh.write(b, 0, 1, offset);
  await fh.close();
}

t.test('checksums catch flipped, truncated and replaced bytes; sampled mode reads little', async (t) => {
  const n = 20_000;
  const dim = 256;
  const { corpus } = clusteredDataset(n, 0, dim, { seed: 3 });
  const plan = planForFactory('IVF64,PQ32np', { n, dim, vectorsKept: true });
  const out = join(dir, 'index');
  await writeVectorIndex(out, corpus, plan);
  const manifest = await readManifest(out);
  const shard = manifest.shards[0] as { file: string; bytes?: number; sampleSha256?: string };
  t.equal(shard.bytes, statSync(join(out, shard.file)).size, 'the manifest records each file size');
  t.match(shard.sampleSha256, /^[0-9a-f]{64}$/, 'and a sampled checksum');
  t.match(manifest.vectors?.sampleSha256, /^[0-9a-f]{64}$/);

  for (const verify of ['auto', 'full', 'sampled'] as const) {
    const index = await ShardedIndex.open(out, { verify });
    t.equal(index.ntotal, n, `intact files open (${verify})`);
    await index.close();
  }

  // vectors.f16 is 10 MB: 64 blocks of 64 KiB leave gaps between them; byte 0 is always sampled.
  const vectors = join(out, VECTORS_FILE);
  await flip(vectors, 0);
  for (const verify of ['auto', 'full', 'sampled'] as const) {
    await t.rejects(
      ShardedIndex.open(out, { verify }),
      { code: 'BAD_FILE', message: /vectors\.f16/ },
      verify,
    );
  }
  await flip(vectors, 0);

  // A byte between two sampled blocks: only a full read sees it.
  const size = statSync(vectors).size;
  const step = (size - 65_536) / 63;
  const between = Math.round(step / 2) + 65_536;
  t.ok(step > 65_536, 'blocks leave gaps at this size');
  await flip(vectors, between);
  await t.rejects(ShardedIndex.open(out, { verify: 'full' }), { code: 'BAD_FILE' }, 'full sees every byte');
  await t.rejects(
    ShardedIndex.open(out, { verify: 'auto' }),
    { code: 'BAD_FILE' },
    'auto is full when small',
  );
  const sampled = await ShardedIndex.open(out, { verify: 'sampled' });
  t.pass('sampled mode misses a byte between its blocks (the trade documented in checksums.ts)');
  await sampled.close();
  await flip(vectors, between);

  await truncate(join(out, shard.file), (shard.bytes as number) - 1);
  await t.rejects(
    ShardedIndex.open(out, { verify: 'sampled' }),
    { code: 'BAD_FILE', message: /bytes, the manifest says/ },
    'a truncated shard is caught by its size',
  );
  await t.resolves(
    ShardedIndex.open(out, { verify: 'off' }).then(
      (i) => i.close(),
      (e: unknown) => {
        // With no check, FAISS itself must still refuse the truncated file with an error, not a crash.
        if ((e as { code?: string }).code === undefined) throw e;
      },
    ),
  );
});

/**
 * Sealed segments (issue #30) on real FAISS: a built IVF-PQ index (re-scored from vectors.f16) takes 50%
 * more vectors, sealed into a segment of its own kind with its trained quantizers (no retraining); at the
 * build's operating point recall@10 stays within 0.02 of a fresh build of the whole. The quantizers' fit
 * (drift) is as good for new vectors of the same kind and clearly worse for vectors from topics the
 * build never saw. Tombstones hide sealed vectors; a changed segment file is refused at open.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  LiveIndex,
  openSegment,
  planForFactory,
  quantizationFit,
  ShardedIndex,
  sealSegment,
} from '../../src/index/index.js';
import { createIndex } from '../../src/native/index.js';
import { clusteredSpace, denseIds, recallAtK, writeVectorIndex } from '../../src/testing/index.js';

const dim = 64;
const nA = 20_000;
const nB = 10_000;
const nq = 400;
const k = 10;
const factory = 'IVF128,PQ16np';

const root = mkdtempSync(join(tmpdir(), 'paramine-seal-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));

const space = clusteredSpace(nA + nB, dim, { seed: 7 });
const all = space.sample(nA + nB, 8).vectors;
const queries = space.sample(nq, 9).vectors;
const A = all.subarray(0, nA * dim);
const B = all.subarray(nA * dim);

const plan = (n: number) =>
  planForFactory(factory, { n, dim, metric: 'ip', refine: 'vectors', vectorsKept: true });

async function exactTop(vectors: Float32Array): Promise<BigInt64Array> {
  const flat = createIndex('Flat', dim, 'ip');
  await flat.add(vectors, denseIds(vectors.length / dim));
  const r = await flat.search(queries, k);
  await flat.close();
  return r.ids;
}

t.test(
  '50% appended and sealed: recall@10 within 0.02 of a fresh build at the same operating point',
  async (t) => {
    await writeVectorIndex(join(root, 'base'), A, plan(nA));
    await writeVectorIndex(join(root, 'fresh'), all, plan(nA + nB));
    const base = await ShardedIndex.open(join(root, 'base'));
    const fresh = await ShardedIndex.open(join(root, 'fresh'));
    t.teardown(() => Promise.all([base.close(), fresh.close()]));
    const tombstones = new Set<number>();
    const live = new LiveIndex(base, tombstones);
    t.teardown(() => live.close());

    await live.add(
      B,
      Array.from({ length: nB }, (_, i) => nA + i),
    );
    const segDir = join(root, 'segments');
    const template = await base.template();
    mkdirSync(segDir);
    const info = await sealSegment(segDir, template, nA, B);
    await template.close();
    t.equal(info.count, nB);
    await live.adopt(await openSegment(segDir, info, dim));
    t.equal(live.segmentSize, 0, 'the sealed vectors left the growing segment');
    t.equal(live.sealed.length, 1);

    const truth = await exactTop(all);
    t.same(fresh.manifest.search, base.manifest.search, 'same defaults');
    // Low settings too, where recall is far from 1 and a worse fit of the appended vectors would show.
    for (const nprobe of [2, 4, base.manifest.search.nprobe]) {
      const rLive = recallAtK(truth, (await live.search(queries, k, { nprobe })).ids, nq, k);
      const rFresh = recallAtK(truth, (await fresh.search(queries, k, { nprobe })).ids, nq, k);
      t.ok(
        rLive >= rFresh - 0.02,
        `nprobe ${nprobe}: base + sealed segment ${rLive.toFixed(3)}, fresh build ${rFresh.toFixed(3)}: within 0.02`,
      );
    }

    // Exact scores from the segment: a sealed vector finds itself at ~1 (half-float rows).
    const self = await live.search(B.subarray(0, dim), 1);
    t.equal(self.ids[0], BigInt(nA));
    t.ok(Math.abs((self.distances[0] as number) - 1) < 1e-3, 'exact re-scored score');

    tombstones.add(nA);
    const gone = await live.search(B.subarray(0, dim), 5);
    t.notOk(Array.from(gone.ids).includes(BigInt(nA)), 'a tombstone hides a sealed vector');

    // A late add of an id already sealed is not added twice.
    await live.add(B.subarray(dim, 2 * dim), [nA + 1]);
    t.equal(live.segmentSize, 0);

    // The segment's files are checked against the record.
    const file = join(segDir, info.vectors.file);
    const bytes = readFileSync(file);
    bytes[100] = (bytes[100] as number) ^ 0xff;
    writeFileSync(file, bytes);
    await t.rejects(openSegment(segDir, info, dim), { code: 'BAD_FILE' });
  },
);

t.test(
  'drift: new topics fit the trained quantizers worse than the build own, same-kind vectors as well',
  async (t) => {
    const base = await ShardedIndex.open(join(root, 'base'));
    t.teardown(() => base.close());
    const template = await base.template();
    t.teardown(() => template.close());
    const params = base.searchPlan(1, {}, true).params;
    const own = await quantizationFit(template, (await base.sampleVectors(2000)) as Float32Array, params);
    const same = await quantizationFit(template, B.subarray(0, 2000 * dim), params);
    const other = clusteredSpace(nA, dim, { seed: 1001 }).sample(2000, 5).vectors;
    const shifted = await quantizationFit(template, other, params);
    t.comment(
      `error / self-recall: build ${own.error.toFixed(4)} / ${own.selfRecall.toFixed(3)}, ` +
        `same kind ${same.error.toFixed(4)} / ${same.selfRecall.toFixed(3)}, new topics ${shifted.error.toFixed(4)} / ${shifted.selfRecall.toFixed(3)}`,
    );
    t.ok(same.error < own.error * 1.2, 'same-kind vectors fit as well');
    t.ok(shifted.error > own.error * 1.5, 'new topics fit clearly worse');
  },
);

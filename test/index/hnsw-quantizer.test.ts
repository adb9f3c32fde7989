/**
 * The HNSW coarse quantizer places vectors in their nearest list, and a query's efSearch really widens its
 * search. FAISS's defaults (graph efConstruction 40, assignment efSearch 16) put 31% of the 10^7 generator
 * vectors outside their nearest list, and FAISS 1.7.3 ignored a per-query efSearch above the graph's own
 * (docs/scale.md). Here: 16,384 lists over 300 topics in 384 dimensions, the small shape of that failure.
 */
import t from 'tap';
import { createIndex, type FaissIndex } from '../../src/native/index.js';
import { clusteredSpace, denseIds } from '../../src/testing/index.js';

const dim = 384;
const nlist = 16_384;
const n = 20_000;
const probes = 2_000;
const space = clusteredSpace(10_000_000, dim, { seed: 3, clusters: 300 });
const x = space.sample(n, 12).vectors;
let index: FaissIndex;
let wide: number;

t.before(async () => {
  index = createIndex(`IVF${nlist}_HNSW32,Flat`, dim, 'ip');
  await index.setCentroids(space.sample(nlist, 11).vectors);
  await index.trainCodes(x.subarray(0, 1_000 * dim));
  await index.add(x, denseIds(n));
  wide = await selfFound(1_024);
});
t.teardown(() => index.close());

/** Share of vectors found by searching for themselves in one list: those stored in the list the search picks. */
async function selfFound(efSearch: number): Promise<number> {
  const r = await index.search(x.subarray(0, probes * dim), 1, { nprobe: 1, efSearch });
  let found = 0;
  for (let i = 0; i < probes; i++) if (r.ids[i] === BigInt(i)) found++;
  return found / probes;
}

t.test('add puts (nearly) every vector in its nearest list', async (t) => {
  t.ok(
    wide >= 0.995,
    `${wide} of the vectors sit in the list a 1,024-wide search finds nearest (FAISS defaults: 0.98)`,
  );
});

t.test("a query's efSearch widens the quantizer's beam past the graph's own", async (t) => {
  const narrow = await selfFound(16);
  t.ok(wide > narrow, `efSearch 1,024 finds the nearest list more often than 16 (${wide} > ${narrow})`);
});

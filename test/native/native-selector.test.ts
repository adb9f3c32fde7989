/**
 * Search with an id selector (FAISS 1.7.3 SearchParameters::sel, IDSelectorBatch): only the given ids come
 * back, exactly the best of them for a flat index (under IndexIDMap, whose positions are translated), and
 * only selected ids from an IVF index; fast-scan indexes refuse it.
 */
import t from 'tap';
import { createIndex } from '../../src/native/index.js';

const dim = 16;
const n = 500;
let seed = 7;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31 - 0.5;
};
const data = Float32Array.from({ length: n * dim }, rand);
// Ids far from positions, so a missed IDMap translation shows.
const ids = BigInt64Array.from({ length: n }, (_, i) => BigInt(1000 + 3 * i));
const queries = data.slice(0, 4 * dim);
const selected = ids.filter((_, i) => i % 7 === 0);
const allowed = new Set(selected);

function brute(q: number, k: number): bigint[] {
  const scored = [...selected].map((id) => {
    const row = (Number(id) - 1000) / 3;
    let s = 0;
    for (let d = 0; d < dim; d++) s += (queries[q * dim + d] as number) * (data[row * dim + d] as number);
    return { id, s };
  });
  return scored
    .sort((a, b) => b.s - a.s)
    .slice(0, k)
    .map((x) => x.id);
}

t.test('flat (IDMap): the best of the selected ids, exactly', async (t) => {
  const index = createIndex('IDMap,Flat', dim, 'ip');
  t.teardown(() => index.close());
  await index.add(data, ids);
  const r = await index.search(queries, 5, { ids: selected });
  for (let q = 0; q < 4; q++) t.same([...r.ids.slice(q * 5, q * 5 + 5)], brute(q, 5), `query ${q}`);
  const few = await index.search(queries, 5, { ids: selected.slice(0, 2) });
  t.same([...few.ids.slice(0, 5)].filter((x) => x >= 0n).length, 2, 'fewer members than k: the rest is -1');
  await t.rejects(index.search(queries, 5, { ids: [1n] as unknown as BigInt64Array }), { code: 'BAD_INPUT' });
});

t.test('IVF: only selected ids', async (t) => {
  const index = createIndex('IVF8,Flat', dim, 'ip');
  t.teardown(() => index.close());
  await index.train(data);
  await index.add(data, ids);
  const r = await index.search(queries, 5, { ids: selected, nprobe: 8 });
  t.ok(
    [...r.ids].every((id) => id < 0n || allowed.has(id)),
    'nothing outside the selection',
  );
  for (let q = 0; q < 4; q++)
    t.same([...r.ids.slice(q * 5, q * 5 + 5)], brute(q, 5), `all lists probed: exact (query ${q})`);
});

/** A bitmap with these ids' bits set (the binding's `exclude`). */
function bitmapOf(excluded: Iterable<bigint>, bytes = 4096): Uint8Array {
  const bits = new Uint8Array(bytes);
  for (const id of excluded)
    bits[Number(id) >> 3] = (bits[Number(id) >> 3] as number) | (1 << (Number(id) & 7));
  return bits;
}

t.test(
  'exclude: the excluded ids never come back, the rest exactly (flat, IDMap, IVF, with ids too)',
  async (t) => {
    // Exclude every id but the selected ones: the answer must then be the selection's best.
    const exclude = bitmapOf(ids.filter((id) => !allowed.has(id)));
    for (const factory of ['IDMap,Flat', 'IVF8,Flat']) {
      const index = createIndex(factory, dim, 'ip');
      if (factory.startsWith('IVF')) await index.train(data);
      await index.add(data, ids);
      const r = await index.search(queries, 5, { exclude, nprobe: 8 });
      for (let q = 0; q < 4; q++)
        t.same([...r.ids.slice(q * 5, q * 5 + 5)], brute(q, 5), `${factory}: query ${q}`);
      // With ids: the selected ones the bitmap keeps (here, none but the first selected).
      const keepOne = bitmapOf(selected.slice(1));
      const both = await index.search(queries, 3, { ids: selected, exclude: keepOne, nprobe: 8 });
      t.same([...both.ids.slice(0, 3)], [selected[0], -1n, -1n], `${factory}: ids and exclude together`);
      await index.close();
    }
    const short = bitmapOf([ids[0] as bigint], 1);
    const index = createIndex('IDMap,Flat', dim, 'ip');
    t.teardown(() => index.close());
    await index.add(data, ids);
    t.equal(
      (await index.search(queries, 1, { exclude: short })).ids[0],
      ids[0],
      'ids past the bitmap are kept',
    );
    await t.rejects(
      index.search(queries, 1, { exclude: new Uint16Array(4) as unknown as Uint8Array }),
      /exclude must be a Uint8Array/,
    );
    const fs = createIndex('IVF4,PQ8x4fs', dim, 'ip');
    t.teardown(() => fs.close());
    await fs.train(data);
    await fs.add(data, ids);
    await t.rejects(fs.search(queries, 1, { exclude: short }), /fast-scan indexes take no id selector/);
  },
);

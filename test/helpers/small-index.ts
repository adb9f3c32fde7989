/**
 * A small served index with writes on it, for the structural-writer tests (structure-lock, compact-crash):
 * 1,000 synthetic sentences under IVF8,Flat (a kind a compaction edits in place) with the tiny encoder, then
 * 300 added (200 of them sealed into segments, 100 growing) and 10 deleted (5 built, 5 added).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildIndex } from '../../src/indexer/build.js';
import { searchOptionsSchema } from '../../src/search/types.js';
import { openService, type Service, type ServiceOptions } from '../../src/service/index.js';
import { syntheticSentence } from './corpus.js';

export const TINY = 'test/fixtures/tiny-encoder';
export const BASE = 1000;
export const ADDED = Array.from({ length: 300 }, (_, i) => `${syntheticSentence(50_000 + i)} (added ${i})`);
export const DELETED = [3, 77, 410, 689, 998, BASE + 10, BASE + 120, BASE + 210, BASE + 250, BASE + 299];
export const PROBES = Array.from({ length: 20 }, (_, i) => syntheticSentence(i * 61 + 7));

export const open = (index: string, o: Partial<ServiceOptions> = {}) =>
  openService({ index, model: TINY, reranker: false, ...o });

export async function smallIndexWithWrites(dir: string): Promise<string> {
  const corpus = join(dir, 'base.txt');
  writeFileSync(corpus, `${Array.from({ length: BASE }, (_, i) => syntheticSentence(i)).join('\n')}\n`);
  const index = join(dir, 'index');
  await buildIndex(
    { inputs: [corpus], out: index, model: TINY, factory: 'IVF8,Flat', quiet: true },
    () => {},
  );
  const s = await open(index, { seal: { sealAt: 1e9 } });
  try {
    for (let i = 0; i < 300; i += 50) {
      await s.writes.add(ADDED.slice(i, i + 50).map((text) => ({ text })));
      if (i === 150) await s.writes.seal(); // 200 sealed (one segment), 100 growing
    }
    await s.writes.delete(DELETED);
  } finally {
    await s.close();
  }
  return index;
}

/** The top 10 ids of each probe (nprobe 2 of 8 lists: the IVF's approximation shows). */
export async function tops(s: Service): Promise<number[][]> {
  const out: number[][] = [];
  for (const p of PROBES) {
    const r = await s.core.search([p], searchOptionsSchema.parse({ k: 10, rerank: false, nprobe: 2 }));
    out.push((r.results[0]?.candidates ?? []).map((c) => c.id));
  }
  return out;
}

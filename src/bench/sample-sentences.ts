/**
 * Benchmark sentences from ../shared/data: ParaSCI-ACL train (both sides), then MultiPIT_Auto train (both
 * sides), normalized and de-duplicated as the indexer does, so line i of the corpus becomes id i.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readPairs } from '../corpus/index.js';
import { dedupKey, normalize } from '../text/index.js';

const DATA = '../shared/data';

export async function sampleSentences(n: number): Promise<string[]> {
  const files = [join(DATA, 'parasci/acl/train.src'), join(DATA, 'multipit/auto/train.csv')];
  for (const f of files)
    if (!existsSync(f)) throw new Error(`${f} is missing: the benchmark needs ../shared/data`);
  const out: string[] = [];
  const seen = new Set<string>();
  for (const f of files) {
    for (const p of await readPairs(f)) {
      for (const s of [p.s1, p.s2]) {
        const k = dedupKey(normalize(s));
        if (k === '' || seen.has(k)) continue;
        seen.add(k);
        out.push(normalize(s));
        if (out.length === n) return out;
      }
    }
  }
  return out;
}

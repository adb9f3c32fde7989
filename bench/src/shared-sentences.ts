/**
 * Benchmark sentences from ../shared/data: both sides of pair files, normalized and de-duplicated as the
 * indexer does (text/distinct.ts), in file order, so line i of the corpus written from them becomes id i.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readPairs } from '../../dist/corpus/index.js';
import { DistinctTexts } from '../../dist/text/index.js';

const DATA = '../shared/data';

/** The distinct sentences of `files` (both sides of every pair), at most `limit`. */
export async function distinctSentences(
  files: readonly string[],
  limit = Number.POSITIVE_INFINITY,
  onFile?: (file: string, added: number) => void,
): Promise<string[]> {
  for (const f of files)
    if (!existsSync(f)) throw new Error(`${f} is missing: the benchmark needs ../shared/data`);
  const distinct = new DistinctTexts();
  for (const f of files) {
    const before = distinct.texts.length;
    for (const p of await readPairs(f)) {
      for (const s of [p.s1, p.s2]) {
        if (distinct.add(s) && distinct.texts.length === limit) return distinct.texts;
      }
    }
    onFile?.(f, distinct.texts.length - before);
  }
  return distinct.texts;
}

/** The first n distinct sentences of ParaSCI-ACL train, then MultiPIT_Auto train. */
export async function sampleSentences(n: number): Promise<string[]> {
  return distinctSentences([join(DATA, 'parasci/acl/train.src'), join(DATA, 'multipit/auto/train.csv')], n);
}

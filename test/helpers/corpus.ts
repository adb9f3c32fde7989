/** Small real corpora for tests: the first verses of the committed demo corpus, and synthetic sentences. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A news sentence none of the test corpora hold, and a paraphrase of it to search with. */
export const NEWS = 'The committee postponed the vote on the new city budget until next week.';
export const NEWS_PARAPHRASE = 'The vote on the city budget was delayed by the committee to next week.';

const DEMO = new URL('../../examples/demo-corpus.jsonl', import.meta.url);

/** The first n lines of examples/demo-corpus.jsonl (WEB and KJV verse pairs), written to dir/name. */
export function demoSlice(dir: string, n: number, name = 'demo.jsonl'): string {
  const lines = readFileSync(DEMO, 'utf8').split('\n').slice(0, n);
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

const ADJ = ['quiet', 'bright', 'old', 'small', 'heavy', 'green', 'broken', 'famous', 'empty', 'cold'];
const NOUN = [
  'teacher',
  'river',
  'engine',
  'garden',
  'letter',
  'village',
  'doctor',
  'window',
  'market',
  'horse',
];
const VERB = ['watched', 'followed', 'repaired', 'painted', 'described', 'visited', 'carried', 'ignored'];
const PLACE = ['station', 'harbour', 'library', 'bridge', 'forest', 'kitchen'];

/** n distinct, deterministic English sentences (i-th is always the same). */
export function syntheticSentence(i: number): string {
  const a = ADJ[i % ADJ.length];
  const b = NOUN[Math.floor(i / ADJ.length) % NOUN.length];
  const c = VERB[Math.floor(i / (ADJ.length * NOUN.length)) % VERB.length];
  const d = NOUN[(i * 7) % NOUN.length];
  const e = PLACE[Math.floor(i / (ADJ.length * NOUN.length * VERB.length)) % PLACE.length];
  return `The ${a} ${b} ${c} the ${d} near the ${e}.`;
}

/** Writes `rows` as dir/corpus.jsonl and builds dir/index over them with these group tables. */
export async function buildGroupedIndex(
  dir: string,
  rows: readonly object[],
  groupKeys: string[],
): Promise<string> {
  const { buildIndex } = await import('../../src/indexer/build.js');
  const { parseGroupKeySpec } = await import('../../src/store/index.js');
  const corpus = join(dir, 'corpus.jsonl');
  writeFileSync(corpus, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const index = join(dir, 'index');
  await buildIndex({
    inputs: [corpus],
    out: index,
    model: 'all-minilm-l6-v2',
    quiet: true,
    groupKeys: groupKeys.map(parseGroupKeySpec),
  });
  return index;
}

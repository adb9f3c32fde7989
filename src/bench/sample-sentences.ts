/**
 * Benchmark sentences from the user's corpus (or the demo corpus the product ships), normalized and
 * de-duplicated as the indexer does, in file order, so line i of the corpus written from them becomes id i.
 */
import { fileURLToPath } from 'node:url';
import { type CorpusFormat, readSentences } from '../corpus/index.js';
import { DistinctTexts } from '../text/index.js';

/** The demo corpus (examples/), when the user names no corpus. */
const DEMO = fileURLToPath(new URL('../../examples/demo-corpus.jsonl', import.meta.url));

/** The first n distinct sentences of `files` (any format `paramine index` reads; default: the demo corpus). */
export async function benchSentences(
  files: readonly string[],
  n: number,
  format?: CorpusFormat,
): Promise<{ texts: string[]; from: string }> {
  const inputs = files.length > 0 ? files : [DEMO];
  const distinct = new DistinctTexts();
  for await (const r of readSentences(inputs, { onBadRecord: 'skip', ...(format ? { format } : {}) })) {
    if ('text' in r && distinct.add(r.text) && distinct.texts.length === n) break;
  }
  return { texts: distinct.texts, from: inputs.join(', ') };
}

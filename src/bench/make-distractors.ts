/**
 * The distractor corpus of the retrieval benchmarks in BENCHMARKS.md: every distinct sentence (after
 * normalization) of the English training-side files in ../shared/data, one per line. Validation pairs
 * queried by the benchmark (ParaSCI-ACL val, MultiPIT expert val) are not in it.
 *
 *   node dist/bench/make-distractors.js --out distractors.txt [--data ../shared/data]
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { distinctSentences } from './sample-sentences.js';

const FILES = [
  'parasci/acl/train.src',
  'multipit/auto/train.csv',
  'multipit/auto/val.csv',
  'multipit/expert/train.csv',
  'mrpc/train.tsv',
  'parasci/arxiv/val.src',
];

const { values } = parseArgs({
  options: { out: { type: 'string' }, data: { type: 'string', default: '../shared/data' } },
});
if (!values.out) throw new Error('--out FILE is required');
const out = await distinctSentences(
  FILES.map((f) => join(values.data, f)),
  undefined,
  (f, added) => process.stderr.write(`${f}: ${added} new sentences\n`),
);
writeFileSync(values.out, `${out.join('\n')}\n`);
process.stderr.write(`${out.length} distractor sentences -> ${values.out}\n`);

/**
 * The laboratory's `indexer`: the product's `paramine bench indexer` on the sentences our figures have always
 * used (the first n distinct ones of ParaSCI-ACL train, then MultiPIT_Auto train, from ../shared/data), written
 * to a corpus file it is given as `--input`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineBenchmark } from '../../dist/bench/harness.js';
import { indexer } from '../../dist/bench/indexer-bench.js';
import { sampleSentences } from './shared-sentences.js';

export const indexerLab = defineBenchmark({
  ...indexer,
  description: `${indexer.description} (on ../shared/data's sentences)`,
  async run(o, log) {
    const dir = mkdtempSync(join(tmpdir(), 'paramine-lab-indexer-'));
    try {
      const corpus = join(dir, 'shared.txt');
      writeFileSync(corpus, `${(await sampleSentences(o.n)).join('\n')}\n`);
      return await indexer.run({ ...o, input: [corpus] }, log);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
});

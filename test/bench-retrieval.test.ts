/**
 * The retrieval benchmark end to end on demo pairs (WEB verse -> its KJV twin) with the real encoder:
 * ranks, exact vs ANN on a flat index, and reranked top-N through the shared core in query groups.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { retrievalBenchmark } from '../src/bench/retrieval.js';
import { HAS_RERANKER } from './helpers/service.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-bench-retrieval-test-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
// 70 pairs: more than one rerank group of 32 queries.
const lines = readFileSync('examples/demo-pairs.tsv', 'utf8').split('\n');
const pairs = join(dir, 'pairs.tsv');
writeFileSync(pairs, `${lines.slice(0, 71).join('\n')}\n`);

t.test('demo pairs: twins found, exact == ANN on a flat index, reranked ranks', async (t) => {
  const run = await retrievalBenchmark({
    pairs,
    distractors: [],
    model: 'all-minilm-l6-v2',
    reranker: HAS_RERANKER ? 'paramine-paraphrase-minilm' : undefined,
    rerankDepth: 5,
    depths: [1, 10, 100],
    exact: true,
    factory: 'auto',
  });
  // One of the 70 pairs has the same sentence on both sides after normalization: skipped, stored once.
  t.equal(run.result.pairs, 69, `pairs ${run.result.pairs}`);
  t.equal(run.result.corpus_size, 139, `corpus ${run.result.corpus_size}`);
  t.ok((run.result.overall.top['10'] as number) >= 0.9, `top-10 ${run.result.overall.top['10']}`);
  t.same(run.exact?.top, run.ann.top, 'flat index: exact and ANN agree');
  if (HAS_RERANKER) {
    const top1 = run.reranked?.top['1'] as number;
    t.ok(top1 >= 0.7, `reranked top-1 ${top1}`);
    t.equal(run.reranked?.n, 69, `every query reranked (${run.reranked?.n})`);
  }
});

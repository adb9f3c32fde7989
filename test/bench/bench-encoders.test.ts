/**
 * `npm run lab -- encoders` with the real encoder: a set's figures equal `bench retrieval --exact` over the same
 * sentences (the one index per encoder is the retrieval benchmark's corpus), and several sets share that
 * index, each ranked over all of it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
// The laboratory's table (it drives the built product: run after `npm run build:ts`, as CI's set-up does).
import { encoders } from '../../bench/src/encoders-table.js';
import { retrievalBenchmark } from '../../src/bench/retrieval.js';
import { buildPairIndex } from '../../src/bench/retrieval-index.js';
import { readPairs } from '../../src/corpus/index.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-bench-encoders-test-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const lines = readFileSync('examples/demo-pairs.tsv', 'utf8').split('\n');
const setA = join(dir, 'a.tsv');
const setB = join(dir, 'b.tsv');
writeFileSync(setA, `${lines.slice(0, 41).join('\n')}\n`);
writeFileSync(setB, `${[lines[0], ...lines.slice(41, 71)].join('\n')}\n`);
const distractors = join(dir, 'distractors.txt');
const corpus = readFileSync('examples/demo-corpus.jsonl', 'utf8')
  .split('\n')
  .filter(Boolean)
  .slice(2000, 2300);
writeFileSync(
  distractors,
  `${corpus.map((l) => (JSON.parse(l) as { text: string }).text.replace(/\n/g, ' ')).join('\n')}\n`,
);
const MODEL = 'all-minilm-l6-v2';
const depths = [1, 10, 100];
/** `bench retrieval --exact` over set A and the distractors (run once): what both tests compare with. */
let referenceRun: ReturnType<typeof retrievalBenchmark> | undefined;
const reference = () =>
  (referenceRun ??= retrievalBenchmark({
    pairs: setA,
    distractors: [distractors],
    model: MODEL,
    depths,
    exact: true,
    factory: 'Flat',
  }));

t.test('one set: the figures of bench retrieval --exact over the same sentences', async (t) => {
  const save = join(dir, 'rows');
  const one = await encoders.run({ encoders: [MODEL], distractors, sets: [setA], depths, save }, () => {});
  const ref = await reference();
  const row = one.result.rows[0];
  t.equal(row?.sentences, ref.result.corpus_size);
  t.equal(row?.sets[0]?.queries, ref.result.pairs);
  t.same(row?.sets[0]?.top, ref.exact?.top, 'top-N');
  t.equal(row?.sets[0]?.mrr, ref.exact?.mrr, 'MRR');
  t.ok((row?.sentencesPerSecond ?? 0) > 0);
  t.equal(
    row?.from,
    'pretrained, `paramine models fetch all-minilm-l6-v2`',
    'the row names where the model came from',
  );
  t.match(
    one.markdown,
    /\| `all-minilm-l6-v2` \| 384 \| \d+\.\d \/ \d+\.\d \/ \d+\.\d, 0\.\d{3} \| \d+ \| 20\d\d-/,
  );
  const again = await encoders.run({ encoders: [MODEL], distractors, sets: [setA], depths, save }, () => {});
  t.same(again.result.rows, one.result.rows, '--save: the row kept is reused, not measured again');
});

t.test('two sets share one index; each is ranked among all of it', async (t) => {
  const two = await encoders.run({ encoders: [MODEL], distractors, sets: [setA, setB], depths }, () => {});
  const row = two.result.rows[0];
  const alone = await reference();
  t.same(
    row?.sets.map((s) => [s.set, s.queries]),
    [
      [setA, alone.result.pairs],
      [setB, 30],
    ],
  );
  t.ok((row?.sentences ?? 0) > alone.result.corpus_size, "set B's sentences in the same index");
  // More sentences can only push A's targets down.
  t.ok((row?.sets[0]?.mrr ?? 1) <= (alone.exact?.mrr ?? 0) + 1e-12, "A's MRR no higher among more sentences");
});

t.test(
  '--work: a build an earlier run left there is resumed, not redone, and removed once measured',
  async (t) => {
    const work = join(dir, 'work');
    // What a run stopped after its build leaves (a kill during the build leaves the indexer's checkpoints).
    const left = await buildPairIndex(
      await readPairs(setA),
      { distractors: [distractors], model: MODEL, factory: 'Flat', work: join(work, MODEL) },
      () => {},
    );
    t.notOk(left.summary.resumed);
    const logged: string[] = [];
    const run = await encoders.run({ encoders: [MODEL], distractors, sets: [setA], depths, work }, (l) =>
      logged.push(l),
    );
    const row = run.result.rows[0];
    const ref = await reference();
    t.ok(
      logged.some((l) => l.includes('resuming')),
      'the kept build is resumed',
    );
    t.equal(row?.resumed, true);
    t.same(row?.sets[0]?.top, ref.exact?.top, 'the same figures as a fresh build');
    t.equal(row?.sets[0]?.mrr, ref.exact?.mrr);
    const summary = left.summary;
    t.equal(
      row?.buildSeconds,
      (summary.embedMs + summary.trainMs + summary.fillMs) / 1000,
      "the rate comes from the indexer's work in the earlier run, not this run's wall time",
    );
    t.ok(summary.embedMs > 0);
    t.match(run.markdown, /build resumed/);
    t.notOk(existsSync(join(work, MODEL)), 'the work directory goes once the row is measured');
  },
);

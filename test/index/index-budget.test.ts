/**
 * `--max-ram`: a collection whose index cannot fit is refused before any work, naming the budget that
 * would do; an index chosen under a budget holds no more than it once loaded (RSS of a child process).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { chooseFactory, formatBytes, readManifest } from '../../src/index/index.js';
import { buildIndex } from '../../src/indexer/build.js';
import { clusteredDataset, writeVectorIndex } from '../../src/testing/index.js';

const MODEL = 'all-minilm-l6-v2';
const dir = mkdtempSync(join(tmpdir(), 'paramine-budget-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('a budget too small is refused before any work, with the budget that would fit', async (t) => {
  const input = join(dir, 'big.txt');
  const n = 300_000;
  writeFileSync(input, `${Array.from({ length: n }, (_, i) => `sentence number ${i}`).join('\n')}\n`);
  const out = join(dir, 'refused');
  // The least any plan needs for n vectors: the budget the refusal must name.
  const least = (() => {
    try {
      chooseFactory({ n, dim: 384, vectorsKept: true, maxRamBytes: 1 });
    } catch (e) {
      return /needs ([\d.]+ [kMG]B)/.exec((e as Error).message)?.[1];
    }
    return undefined;
  })();
  t.ok(least, `the smallest plan needs ${least}`);
  const t0 = performance.now();
  await t.rejects(buildIndex({ inputs: [input], out, model: MODEL, maxRam: '2MB', quiet: true }), {
    code: 'OVER_BUDGET',
    message: new RegExp(`${n} 384-d vectors fits in 2\\.0 MB.*needs ${least}`),
  });
  const ms = performance.now() - t0;
  t.ok(ms < 5000, `refused in ${ms.toFixed(0)} ms`);
  t.notOk(existsSync(out), 'nothing written: no store, no work directory');
  await t.rejects(buildIndex({ inputs: [input], out, model: MODEL, maxRam: 'lots' }), {
    code: 'BAD_INPUT',
    message: /"lots" is not a size/,
  });
  await t.rejects(
    buildIndex({ inputs: [input], out, model: MODEL, maxRam: '50MB', factory: 'IVF1024,PQ64np,RFlat' }),
    { code: 'OVER_BUDGET', message: /IVF1024,PQ64np,RFlat for 300000 384-d vectors needs 4\d\d MB/ },
  );
});

t.test('an index chosen under a budget stays within it once loaded', async (t) => {
  const n = 50_000;
  const dim = 384;
  const budget = 4.5e6;
  const { corpus } = clusteredDataset(n, 1, dim, { seed: 7 });
  // A 10k training sample (IVF128) keeps the test short; the cost is mostly the codes and ids anyway.
  const plan = chooseFactory({ n, dim, vectorsKept: true, maxRamBytes: budget, maxTrainingVectors: 10_000 });
  t.equal(plan.factory, 'IVF128,PQ48np', 'Flat (77 MB) does not fit; IVF-PQ refined from vectors.f16 does');
  t.ok(plan.cost.total.ram <= budget);
  t.match(plan.reason, /RAM budget 4\.5 MB: 50000 x \(48 B code \+ 8 B id\) = 2\.8 MB \+ fixed/);
  t.match(plan.reason, /over budget: Flat \(77\.2 MB\)/);
  const out = join(dir, 'fits');
  await writeVectorIndex(out, corpus, plan);
  const manifest = await readManifest(out);
  t.match(JSON.stringify(manifest.build), /RAM budget 4\.5 MB/, 'the arithmetic is in the manifest');

  const { stdout } = await promisify(execFile)(process.execPath, [
    ...process.execArgv,
    'test/helpers/index-rss.ts',
    out,
  ]);
  const { before, after, ntotal } = JSON.parse(stdout) as { before: number; after: number; ntotal: number };
  t.equal(ntotal, n);
  const held = after - before;
  t.comment(
    `resident set less the JS heap ${formatBytes(before)} -> ${formatBytes(after)}: the index holds ${formatBytes(held)}; ` +
      `model ${formatBytes(plan.cost.total.ram)}, budget ${formatBytes(budget)}`,
  );
  t.ok(held <= budget, `loaded index holds ${formatBytes(held)} <= ${formatBytes(budget)}`);
  t.ok(held >= 0.5 * plan.cost.total.ram, 'and about what the cost model says (the lists were read)');
});

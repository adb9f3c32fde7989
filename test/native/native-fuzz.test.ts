/**
 * Seeded fuzzing of the FAISS binding's public functions (src/testing/native-fuzz.ts) in child processes:
 * random arguments (wrong dimensions, NaN/Inf and overflowing vectors, ids out of range, wrong array
 * kinds, closed indexes, closes racing with searches). A crash of the addon is the child's signal or
 * exit code, so it fails here instead of taking the test runner down. About 30 s in all.
 * FUZZ_SEEDS=1,2,3 and FUZZ_SECONDS=10 widen it.
 */
import { spawnSync } from 'node:child_process';
import t from 'tap';
import type { FuzzSummary } from '../../src/testing/native-fuzz.js';

const seeds = (process.env.FUZZ_SEEDS ?? '11,12,13').split(',').map(Number);
const seconds = Number(process.env.FUZZ_SECONDS ?? 10);

for (const seed of seeds) {
  t.test(`seed ${seed}: ${seconds} s of random calls, no crash, only coded errors`, async (t) => {
    const r = spawnSync(process.execPath, ['dist/testing/native-fuzz.js', String(seed), String(seconds)], {
      encoding: 'utf8',
      timeout: (seconds + 60) * 1000,
      maxBuffer: 64 << 20,
    });
    const tail = r.stderr
      .split('\n')
      .filter((l) => !l.startsWith('WARNING'))
      .slice(-10)
      .join('\n');
    t.equal(
      r.signal,
      null,
      `no signal (crash) — rerun: FUZZ_TRACE=1 node dist/testing/native-fuzz.js ${seed} ${seconds}\n${tail}`,
    );
    t.equal(r.status, 0, 'exit 0');
    const s = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as FuzzSummary;
    t.same(s.findings, [], 'every failure was a ParamineError');
    t.ok(s.ops > 1000, `${s.ops} calls: ${s.ok} ok, ${s.rejected} rejected ${JSON.stringify(s.byCode)}`);
    t.ok(s.ok > 100 && s.rejected > 100, 'both successes and rejections were exercised');
  });
}

/**
 * The short kill loop: `npm run lab -- kill-loop` SIGKILLs an index build and a `paramine mine` job at
 * seeded random points, resumes them with --resume, and compares each with an uninterrupted run (the
 * shard and vector bytes; the pairs file, in order). 6 iterations by default (KILL_LOOP_ITERATIONS);
 * the 100-iteration run and its numbers are in docs/reliability.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { KillLoopResult } from '../../bench/src/kill-loop.js';

const iterations = process.env.KILL_LOOP_ITERATIONS ?? '6';
const dir = mkdtempSync(join(tmpdir(), 'paramine-kill-loop-test-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test(`${iterations} kill-and-resume rounds lose and duplicate nothing`, async (t) => {
  const json = join(dir, 'kill-loop.json');
  execFileSync(
    process.execPath,
    [
      'bench/dist/cli.js',
      'kill-loop',
      '--iterations',
      iterations,
      '--sentences',
      '200',
      '--seed',
      '3',
      '--json',
      json,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'], timeout: 3_000_000 },
  );
  const r = JSON.parse(readFileSync(json, 'utf8')) as KillLoopResult;
  const s = r.summary;
  t.equal(s.iterations, Number(iterations));
  t.ok(s.buildKills + s.mineKills >= 1, `${s.buildKills} builds and ${s.mineKills} jobs were killed mid-run`);
  t.equal(s.buildIdentical, s.iterations, 'every resumed index has the uninterrupted bytes');
  t.equal(s.mineIdentical, s.iterations, 'every resumed job has the uninterrupted pairs, in order');
  t.ok(r.reference.pairs > 0, `${r.reference.pairs} pairs in the reference`);
});

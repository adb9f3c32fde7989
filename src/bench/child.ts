/**
 * `paramine ARGS` as a measured child process, the way a user runs it: its wall time, and its peak RSS
 * and CPU time as the child itself reports them when it exits (usage-preload.ts), read from JSON.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));
const PRELOAD = new URL('./usage-preload.js', import.meta.url).href;

const usageSchema = z.object({
  exit_code: z.number().int(),
  max_rss_bytes: z.number().nonnegative(),
  user_cpu_s: z.number().nonnegative(),
  system_cpu_s: z.number().nonnegative(),
});
export type ChildUsage = z.output<typeof usageSchema>;

export interface ChildRun extends ChildUsage {
  wall_s: number;
  stdout: string;
}

/** Runs `paramine ...args` to completion (throws when it fails); its stderr goes to ours. */
export function runCli(args: readonly string[]): ChildRun {
  const dir = mkdtempSync(join(tmpdir(), 'paramine-bench-child-'));
  try {
    const file = join(dir, 'usage.json');
    const t0 = performance.now();
    const stdout = execFileSync(process.execPath, ['--import', PRELOAD, CLI, ...args], {
      encoding: 'utf8',
      env: { ...process.env, PARAMINE_USAGE_FILE: file },
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 << 20,
    });
    const wall_s = (performance.now() - t0) / 1000;
    const usage = usageSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
    return { ...usage, wall_s, stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

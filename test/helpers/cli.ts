/** `paramine ARGS` as a real process (the built CLI: scripts/setup builds dist/ when stale); its stdout, or throws with stderr. */
import { spawnSync } from 'node:child_process';

export function runCli(...args: string[]): string {
  const r = spawnSync(process.execPath, ['dist/cli.js', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`paramine ${args.join(' ')}: ${r.status}\n${r.stderr}`);
  return r.stdout;
}

/** `paramine ARGS` as a real process from the sources (the tests' own loader); its stdout, or throws with stderr. */
import { spawnSync } from 'node:child_process';

export function runCli(...args: string[]): string {
  const r = spawnSync(process.execPath, [...process.execArgv, 'src/cli.ts', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`paramine ${args.join(' ')}: ${r.status}\n${r.stderr}`);
  return r.stdout;
}

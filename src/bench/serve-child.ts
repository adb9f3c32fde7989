/** `paramine serve` as a child process, for benchmarks and tests that need a real server over HTTP. */
import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Spawns node with `nodeArgs` (the CLI entry, then `serve` and its flags; --port 0 picks a free port) and
 * resolves with the child and its base URL once it logs that it listens; rejects with its output if it
 * exits first.
 */
export async function spawnServe(
  nodeArgs: readonly string[],
  stderr: 'pipe' | 'inherit' = 'pipe',
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...nodeArgs], { stdio: ['ignore', 'pipe', stderr] });
  let out = '';
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${out}`)));
  });
  return { child, url };
}

/** `paramine serve` as a child process, for tests and benchmarks that need a real server over HTTP. */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

export interface ServeChild {
  child: ChildProcess;
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  /** SIGTERM, then SIGKILL after 10 s; resolves once the child has exited. */
  stop(): Promise<void>;
}

export interface SpawnServeOptions {
  /** The child's stderr: kept for the error message ('pipe', default) or passed through ('inherit'). */
  stderr?: 'pipe' | 'inherit';
  /** How long loading the models and the index may take (default 180 s). */
  readyTimeoutMs?: number;
  /** The child's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

/** A TCP port nobody listens on right now (the OS picks it). */
export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      s.close(() => ok(port));
    });
  });
}

/**
 * Spawns node with `nodeArgs` (the CLI entry, then `serve` and its flags, without --host and --port) on a
 * free loopback port and resolves once GET /readyz answers 200; rejects with the child's last output if
 * it exits first or is not ready in time.
 */
export async function spawnServe(
  nodeArgs: readonly string[],
  options: SpawnServeOptions = {},
): Promise<ServeChild> {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, '--host', '127.0.0.1', '--port', String(port)], {
    stdio: ['ignore', 'pipe', options.stderr ?? 'pipe'],
    env: options.env ?? process.env,
  });
  let output = '';
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 180_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`serve exited (${child.exitCode}): ${output}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) return { child, url, port, stop };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`serve was not ready within ${options.readyTimeoutMs ?? 180_000} ms: ${output}`);
}

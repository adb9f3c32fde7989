/**
 * Drives src/bench/index-bench.py (Debian's Python FAISS) as a child process: one JSON request per line,
 * one JSON answer per line, one request at a time, so Python never runs while the Node side is timing.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export interface PythonBuild {
  trainS: number;
  addPerS: number;
  rssDeltaBytes: number;
  rssBytes: number;
  fileBytes: number;
}

export class PythonFaiss {
  readonly faissVersion: string;
  /** faiss.get_compile_options() where the script reports it (e.g. "OPTIMIZE AVX2"). */
  readonly simd: string | undefined;
  readonly #child: ChildProcessByStdio<Writable, Readable, null>;
  readonly #lines: AsyncIterator<string>;
  readonly #rl: Interface;

  private constructor(
    child: ChildProcessByStdio<Writable, Readable, null>,
    rl: Interface,
    hello: { faissVersion: string; simd?: string },
  ) {
    this.#child = child;
    this.#rl = rl;
    this.#lines = rl[Symbol.asyncIterator]();
    this.faissVersion = hello.faissVersion;
    this.simd = hello.simd;
  }

  /**
   * Starts /usr/bin/python3 with the bench script (or `side`'s interpreter and script, same protocol);
   * `config` tells it where the vectors are.
   */
  static async start(
    config: Record<string, unknown>,
    env: NodeJS.ProcessEnv,
    side: { python?: string; script?: string } = {},
  ): Promise<PythonFaiss> {
    const script = side.script ?? fileURLToPath(new URL('../src/index-bench.py', import.meta.url));
    const child = spawn(side.python ?? '/usr/bin/python3', [script, JSON.stringify(config)], {
      env,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const rl = createInterface({ input: child.stdout });
    const first = await rl[Symbol.asyncIterator]().next();
    if (first.done) throw new Error('python3 exited before it was ready (is python3-faiss installed?)');
    const hello = JSON.parse(first.value) as { ready: boolean; faissVersion: string; simd?: string };
    return new PythonFaiss(child, rl, hello);
  }

  async request<T>(req: Record<string, unknown>): Promise<T> {
    this.#child.stdin.write(`${JSON.stringify(req)}\n`);
    const line = await this.#lines.next();
    if (line.done) throw new Error(`python3 exited during ${JSON.stringify(req)}`);
    const out = JSON.parse(line.value) as T & { error?: string };
    if (out.error) throw new Error(`python3: ${out.error}`);
    return out;
  }

  build(factory: string): Promise<PythonBuild> {
    return this.request<PythonBuild>({ cmd: 'build', factory });
  }

  /** Seconds for the configured number of single-query searches, one after another. */
  async single(nprobe: number): Promise<number> {
    return (await this.request<{ seconds: number }>({ cmd: 'single', nprobe })).seconds;
  }

  /** Seconds for one search over all queries, and its recall@k. */
  batch(nprobe: number): Promise<{ seconds: number; recall: number }> {
    return this.request({ cmd: 'batch', nprobe });
  }

  close(): void {
    this.#rl.close();
    this.#child.stdin.end();
  }
}

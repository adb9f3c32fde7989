/**
 * Support for the queue tests: a real redis-server on a random loopback port (no persistence), real
 * `paramine worker` child processes, and a corpus with duplicates inside and across chunks.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Queue } from 'bullmq';
import type { Test } from 'tap';
import type { Encoder } from '../../src/encode/index.js';
import { ShardedIndex } from '../../src/index/index.js';
import { markerPath } from '../../src/queue/layout.js';
import { SentenceStore } from '../../src/store/index.js';
import { syntheticSentence } from './corpus.js';

/** Why the queue tests cannot run here, or undefined when redis-server is installed. */
export function redisMissing(): string | undefined {
  const r = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? undefined : 'redis-server is not installed (scripts/setup installs it)';
}

/** Skips the test with the reason outside CI; under CI=true a missing Redis is a failure. */
export function needRedis(t: Test): boolean {
  const missing = redisMissing();
  if (missing === undefined) return true;
  if (process.env.CI === 'true') t.fail(`CI: ${missing}`);
  else t.pass(`skipped: ${missing}`, { skip: missing });
  return false;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

async function ping(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const sock = new Socket();
    sock.once('error', () => ok(false));
    sock.connect(port, '127.0.0.1', () => sock.write('PING\r\n'));
    sock.once('data', (d) => {
      sock.destroy();
      ok(d.toString().startsWith('+PONG'));
    });
  });
}

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A redis-server on a random loopback port; with `aofDir`, append-only persistence there (restartable). */
export async function startRedis(t: Test, o: { aofDir?: string; port?: number } = {}): Promise<RedisServer> {
  const port = o.port ?? (await freePort());
  const persistence = o.aofDir
    ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', o.aofDir]
    : ['--appendonly', 'no'];
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence],
    {
      stdio: 'ignore',
    },
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((ok) => child.once('exit', ok));
    }
  };
  t.teardown(stop);
  for (let i = 0; i < 100 && !(await ping(port)); i++) await sleep(50);
  return { url: `redis://127.0.0.1:${port}/0`, port, stop };
}

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything it wrote to stderr so far. */
  log(): string;
  /** Resolves when its log matches `re`. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
}

/** A `paramine worker` child process (the built CLI, dist/cli.js: no TypeScript compile at each start). */
export function startWorker(t: Test, url: string, args: string[] = []): WorkerProcess {
  const child = spawn(
    process.execPath,
    ['dist/cli.js', 'worker', '--queue', url, '--lock-ms', '2000', '--stalled-ms', '1000', ...args],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let text = '';
  child.stderr?.on('data', (d: Buffer) => {
    text += d.toString();
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    child,
    log: () => text,
    async waitFor(re, timeoutMs = 120_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const m = re.exec(text);
        if (m) return m[0];
        if (Date.now() > until) throw new Error(`worker log never matched ${re}:\n${text}`);
        if (child.exitCode !== null) throw new Error(`worker exited (${child.exitCode}):\n${text}`);
        await sleep(5);
      }
    },
  };
}

/**
 * n lines of distinct synthetic sentences with duplicates: every 7th line repeats one 40 lines back
 * (in the same chunk or the one before), every 11th is a case/punctuation variant of line 3, and some
 * lines are filtered (empty, one token).
 */
export function corpusWithDuplicates(dir: string, n: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 97 === 5) lines.push('');
    else if (i % 89 === 6) lines.push('Hi');
    else if (i % 11 === 10) lines.push(syntheticSentence(3).toUpperCase().replace('.', '!'));
    else if (i % 7 === 6 && i >= 40) lines.push(lines[i - 40] as string);
    else lines.push(syntheticSentence(i));
  }
  const path = join(dir, 'corpus.txt');
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** Every (id, text, meta) of a built index, in id order. */
export async function contents(out: string) {
  const store = SentenceStore.open(join(out, 'store'), { readOnly: true });
  const rows = [...store.range(0, Number.MAX_SAFE_INTEGER)].map((r) => [r.id, r.record.text, r.record.meta]);
  await store.close();
  return rows;
}

/** The top-10 ids of 100 queries (sentences not in the corpus and from it). */
export async function topTen(out: string, encoder: Encoder): Promise<number[][]> {
  const index = await ShardedIndex.open(out, { model: { sha256: encoder.onnxSha256 }, dim: encoder.dim });
  const queries = Array.from({ length: 100 }, (_, i) => syntheticSentence(5000 + 37 * i));
  const { ids } = await index.search(await encoder.encode(queries), 10);
  await index.close();
  return Array.from({ length: 100 }, (_, q) => [...ids.subarray(q * 10, q * 10 + 10)].map(Number));
}

/**
 * Stops `w` in the middle of a job of `stage`: SIGSTOP as soon as it logs the job's start, and SIGKILL
 * if the job is still active with no output (else let it go on and wait for its next job). Returns the
 * id of the job it died holding.
 */
export async function killMidJob(
  w: WorkerProcess,
  stage: 'embed' | 'fill' | 'mine',
  queue: Queue,
  output: (id: string) => string,
): Promise<string> {
  const seen = new Set<string>();
  for (;;) {
    const ids = [...w.log().matchAll(new RegExp(`${stage} (\\S+) started`, 'g'))].map((m) => m[1] as string);
    const id = ids.find((i) => !seen.has(i));
    if (id === undefined) {
      if (w.child.exitCode !== null) throw new Error(`worker exited:\n${w.log()}`);
      await sleep(2);
      continue;
    }
    seen.add(id);
    w.child.kill('SIGSTOP');
    if ((await queue.getJobState(id)) === 'active' && !existsSync(markerPath(output(id)))) {
      w.child.kill('SIGKILL');
      await new Promise((ok) => w.child.once('exit', ok));
      return id;
    }
    w.child.kill('SIGCONT');
  }
}

/**
 * Storage faults: corrupted and truncated shards, manifest and LMDB store; an index opened with another
 * model; two processes on one job directory; and a full disk (a small tmpfs, when this process may mount
 * one) during an index build, a mining job and annotation writes. Each must end in a stable error code,
 * never a crash or a silently wrong answer, and a resumed build or job must equal an uninterrupted one.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { AnnotationStore } from '../../src/annotations/index.js';
import { ShardedIndex } from '../../src/index/sharded.js';
import { buildIndex } from '../../src/indexer/build.js';
import { JobStore } from '../../src/jobs/index.js';
import { openService } from '../../src/service/index.js';
import { LOCK_FILE } from '../../src/store/index.js';
import { demoSlice } from '../helpers/corpus.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-faults-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const corpus = demoSlice(dir, 300);
const good = join(dir, 'good');
await buildIndex({ inputs: [corpus], out: good, model: 'all-minilm-l6-v2', quiet: true });

/** A copy of the good index to damage. */
function copy(name: string): string {
  const to = join(dir, name);
  cpSync(good, to, { recursive: true });
  return to;
}

t.test('a corrupted or truncated shard, manifest or vectors file is BAD_FILE, never an answer', async (t) => {
  const flipped = copy('flipped');
  const shard = join(flipped, 'shard-000.faiss');
  const bytes = readFileSync(shard);
  const at = Math.floor(bytes.length * 0.6);
  bytes[at] = (bytes[at] as number) ^ 0x40; // inside the vectors: FAISS itself would not notice
  writeFileSync(shard, bytes);
  await t.rejects(ShardedIndex.open(flipped), { code: 'BAD_FILE', message: /sha256/ }, 'one flipped bit');

  const cut = copy('cut');
  truncateSync(join(cut, 'shard-000.faiss'), Math.floor(statSync(join(cut, 'shard-000.faiss')).size / 2));
  await t.rejects(ShardedIndex.open(cut), { code: 'BAD_FILE' }, 'truncated shard');
  await t.rejects(ShardedIndex.open(cut, { verify: 'off' }), { code: 'BAD_FILE' }, 'truncated, unverified');

  const vec = copy('vectors');
  const vf = join(vec, 'vectors.f16');
  const v = readFileSync(vf);
  v[100] = (v[100] as number) ^ 1;
  writeFileSync(vf, v);
  await t.rejects(
    ShardedIndex.open(vec),
    { code: 'BAD_FILE', message: /vectors.f16/ },
    'flipped kept vector',
  );

  for (const [name, damage] of [
    ['manifest-cut', (m: string) => m.slice(0, m.length / 2)],
    ['manifest-empty', () => ''],
    ['manifest-fields', (m: string) => m.replace('"ntotal"', '"nototal"')],
    ['manifest-count', (m: string) => m.replace(/"count":\s*(\d+)/, (_x, n) => `"count": ${Number(n) + 1}`)],
    ['manifest-escape', (m: string) => m.replace('shard-000.faiss', '../good/shard-000.faiss')],
  ] as const) {
    const d = copy(name);
    const path = join(d, 'manifest.json');
    writeFileSync(path, damage(readFileSync(path, 'utf8')));
    await t.rejects(ShardedIndex.open(d), { code: 'BAD_FILE' }, name);
  }
  const ok = await ShardedIndex.open(good);
  t.equal(ok.ntotal, ok.manifest.ntotal, 'the undamaged index opens');
  await ok.close();
});

t.test('a damaged sentence store fails to open with a code, in a child that does not crash', async (t) => {
  for (const [name, damage] of [
    ['lmdb-cut', (p: string) => truncateSync(p, 4096)],
    ['lmdb-junk', (p: string) => writeFileSync(p, Buffer.alloc(statSync(p).size, 0x5a))],
  ] as const) {
    const d = copy(name);
    const file = join(d, 'store', 'data.mdb');
    damage(file);
    const r = spawnSync(
      process.execPath,
      ['dist/cli.js', 'serve', '--index', d, '--port', '0', '--no-reranker'],
      {
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    t.equal(r.signal, null, `${name}: no signal`);
    t.not(r.status, 0, `${name}: exits non-zero`);
    t.match(r.stderr + r.stdout, /BAD_FILE/, `${name}: says BAD_FILE`);
  }
});

t.test('an index opened with another model is MODEL_MISMATCH', async (t) => {
  await t.rejects(openService({ index: good, model: 'all-minilm-l6-v2-q', reranker: false }), {
    code: 'MODEL_MISMATCH',
  });
});

t.test('two processes on one job directory: the second is LOCKED; a dead owner is taken over', async (t) => {
  const jobsDir = join(dir, 'jobs-shared');
  const first = JobStore.open(jobsDir);
  t.throws(() => JobStore.open(jobsDir), { code: 'LOCKED', message: new RegExp(`process ${process.pid}`) });
  t.throws(() => AnnotationStore.open(jobsDir), { code: 'LOCKED' }, 'annotations in the same place too');
  const child = spawnSync(
    process.execPath,
    ['dist/cli.js', 'serve', '--index', good, '--jobs-dir', jobsDir, '--port', '0', '--no-reranker'],
    { encoding: 'utf8', timeout: 120_000 },
  );
  t.not(child.status, 0, 'a second service refuses to start');
  t.match(child.stderr + child.stdout, /LOCKED/);
  t.notOk(JobStore.open(jobsDir, { reader: true }) === undefined, 'a reader (export) needs no lock');
  const lock = JSON.parse(readFileSync(join(jobsDir, LOCK_FILE), 'utf8')) as Record<string, unknown>;
  await first.close();
  const again = JobStore.open(jobsDir);
  await again.close();
  // A lock left by a SIGKILLed process: its pid is gone.
  const dead = execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  writeFileSync(join(jobsDir, LOCK_FILE), JSON.stringify({ ...lock, pid: Number(dead) }));
  const taken = JobStore.open(jobsDir);
  t.ok(taken, 'a stale lock is taken over');
  await taken.close();
});

/** A tmpfs of `size` at a fresh mount point, or undefined when mounting is not allowed here. */
function tmpfs(name: string, size: string): string | undefined {
  const at = join(dir, name);
  mkdirSync(at);
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', at], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  t.teardown(() => {
    spawnSync('umount', [at]);
  });
  return at;
}
const resize = (at: string, size: string) => execFileSync('mount', ['-o', `remount,size=${size}`, at]);

t.test('disk full during an index build: DISK_FULL, then --resume gives the same index', async (t) => {
  const at = tmpfs('build-fs', '400k');
  if (at === undefined) {
    t.plan(0, 'cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN)');
    return;
  }
  const out = join(at, 'index');
  await t.rejects(buildIndex({ inputs: [corpus], out, model: 'all-minilm-l6-v2', quiet: true }), {
    code: 'DISK_FULL',
    message: /--resume/,
  });
  resize(at, '64m');
  await buildIndex({ inputs: [corpus], out, model: 'all-minilm-l6-v2', quiet: true, resume: true });
  const [a, b] = await Promise.all([ShardedIndex.open(good), ShardedIndex.open(out)]);
  t.equal(b.ntotal, a.ntotal);
  t.same(
    b.manifest.shards.map((s) => s.sha256),
    a.manifest.shards.map((s) => s.sha256),
    'the same shard bytes as the uninterrupted build',
  );
  t.equal(b.manifest.vectors?.sha256, a.manifest.vectors?.sha256, 'the same kept vectors');
  await Promise.all([a.close(), b.close()]);
});

t.test(
  'disk full during annotation writes: DISK_FULL, no crash, writes resume once there is room',
  async (t) => {
    const at = tmpfs('ann-fs', '2m');
    if (at === undefined) {
      t.plan(0, 'cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN)');
      return;
    }
    const store = AnnotationStore.open(join(at, 'annotations'));
    let written = 0;
    let error: unknown;
    for (; written < 10_000; written++) {
      try {
        await store.put({
          s1: `${'x'.repeat(2000)} ${written}`,
          s2: 'y'.repeat(2000),
          label: 'paraphrase',
          scheme: 'binary',
          decision: 'accept',
        });
      } catch (e) {
        error = e;
        break;
      }
    }
    t.match(error, { code: 'DISK_FULL' }, `DISK_FULL after ${written} writes`);
    t.equal([...store.list()].length, written, 'every acknowledged write is there, the failed one is not');
    resize(at, '64m');
    await store.put({ s1: 'after', s2: 'space', label: 'paraphrase', scheme: 'binary', decision: 'accept' });
    t.equal([...store.list()].length, written + 1, 'writes work again without a restart');
    await store.close();
  },
);

/**
 * A seeded fuzzer of the FAISS binding's public functions, meant to run in a child process (a crash of
 * the addon is then a signal or an exit code the parent sees):
 *
 *   node dist/testing/native-fuzz.js SEED SECONDS [MAX_OPS]
 *
 * Every call gets random arguments — right and wrong dimensions, NaN/Inf, ids out of range, typed arrays
 * of the wrong kind, junk objects, closed indexes — and several calls run at once (a close racing with
 * searches and adds). Each call must either succeed or fail with a ParamineError; anything else (another
 * error type, a crash, a hang) fails the run. Files are only ever written inside a fresh temp directory.
 * Prints one JSON line: {seed, ops, ok, rejected, byCode}; exits 1 on a finding.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isParamineError } from '../errors.js';
import { createIndex, type FaissIndex, HalfVectors, kmeans, mapFile, readIndex } from '../native/index.js';
import { Rng } from './vectors.js';

const FACTORIES = [
  'Flat',
  'IVF4,Flat',
  'IVF4,SQ8',
  'SQfp16',
  'IVF4,PQ4np',
  'IVF4,Flat,RFlat',
  'HNSW8',
  'PCA8,Flat',
  'IVF4,PQ7',
  'Nope',
  '',
];
const DIMS = [8, 16, 7, 1, 0, -3, 1.5, Number.NaN, 1 << 20];

export class Fuzz {
  readonly rng: Rng;
  readonly dir: string;
  readonly pool: FaissIndex[] = [];
  readonly halves: HalfVectors[] = [];
  readonly files: string[] = [];

  constructor(seed: number) {
    this.rng = new Rng(seed);
    this.dir = mkdtempSync(join(tmpdir(), 'paramine-native-fuzz-'));
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.rng.int(xs.length)] as T;
  }

  chance(p: number): boolean {
    return this.rng.next() < p;
  }

  number(): number {
    return this.pick([
      0,
      1,
      2,
      3,
      5,
      10,
      64,
      1000,
      -1,
      -7,
      0.5,
      2.5,
      Number.NaN,
      Infinity,
      -Infinity,
      2 ** 31,
      2 ** 53,
      1e300,
    ]);
  }

  /** Vectors: usually well-formed for `dim`, sometimes poisoned, cut, of another kind or not an array. */
  vectors(dim: number): unknown {
    const d = Number.isInteger(dim) && dim > 0 && dim < 4096 ? dim : 8;
    const n = this.pick([0, 1, 3, 16, 64, 300]);
    const x = new Float32Array(n * d);
    for (let i = 0; i < x.length; i++) x[i] = this.rng.normal();
    const r = this.rng.next();
    if (r < 0.55 || x.length === 0) return x;
    if (r < 0.65) x[this.rng.int(x.length)] = this.pick([Number.NaN, Infinity, -Infinity, 3e38]);
    else if (r < 0.75) return x.subarray(0, x.length - 1 - this.rng.int(Math.min(d, x.length)));
    else if (r < 0.8) return new Float64Array(x);
    else if (r < 0.85) return Array.from(x.subarray(0, 16));
    else if (r < 0.9) return new Float32Array(x.buffer, 4 * this.rng.int(2), Math.max(0, x.length - 2));
    else if (r < 0.95) return this.pick([undefined, null, 'vectors', 42, {}, new Uint8Array(32)]);
    return x;
  }

  ids(n: number): unknown {
    const r = this.rng.next();
    const ids = new BigInt64Array(Math.max(0, n));
    for (let i = 0; i < ids.length; i++) ids[i] = BigInt(this.rng.int(1 << 20));
    if (r < 0.6) return ids;
    if (r < 0.7 && ids.length > 0)
      ids[this.rng.int(ids.length)] = this.pick([-1n, -(2n ** 63n), 2n ** 63n - 1n, -5n]);
    else if (r < 0.8) return ids.subarray(0, Math.max(0, ids.length - 1));
    else if (r < 0.85) return new BigUint64Array(ids.length);
    else if (r < 0.9) return new Int32Array(ids.length);
    else if (r < 0.95) return this.pick([undefined, null, [1, 2], 'ids']);
    return ids;
  }

  index(): FaissIndex | undefined {
    return this.pool.length === 0 ? undefined : this.pick(this.pool);
  }

  path(): string {
    const r = this.rng.next();
    if (r < 0.5 && this.files.length > 0) return this.pick(this.files);
    if (r < 0.7) return join(this.dir, `f${this.rng.int(8)}.faiss`);
    if (r < 0.8) return join(this.dir, 'no', 'such', 'dir', 'x');
    return this.pick(['', this.dir, join(this.dir, 'junk.bin'), join(this.dir, 'empty.bin')]);
  }
}

type Op = (f: Fuzz) => Promise<unknown>;

const loose = <T>(x: unknown): T => x as T;

/** Every public entry point, with arguments drawn by the fuzzer. */
const OPS: Record<string, Op> = {
  create: async (f) => {
    const ix = createIndex(f.pick(FACTORIES), f.pick(DIMS), loose(f.pick(['ip', 'l2', 'cosine', 3])));
    f.pool.push(ix);
    if (f.pool.length > 6) await f.pool.shift()?.close();
  },
  train: async (f) => f.index()?.train(loose(f.vectors(f.index()?.dim ?? 8))),
  add: async (f) => {
    const ix = f.index();
    if (ix === undefined) return;
    const v = f.vectors(ix.dim);
    const n = v instanceof Float32Array && ix.dim > 0 ? Math.floor(v.length / ix.dim) : f.rng.int(10);
    return ix.add(loose(v), loose(f.ids(n)));
  },
  search: async (f) => {
    const ix = f.index();
    if (ix === undefined) return;
    const params: Record<string, unknown> = {};
    if (f.chance(0.3)) params.nprobe = f.number();
    if (f.chance(0.2)) params.kFactor = f.number();
    if (f.chance(0.2)) params.efSearch = f.number();
    if (f.chance(0.3)) params.ids = f.ids(f.rng.int(50));
    return ix.search(
      loose(f.vectors(ix.dim)),
      f.chance(0.8) ? f.rng.int(20) + 1 : f.number(),
      loose(f.chance(0.95) ? params : 7),
    );
  },
  write: async (f) => {
    const ix = f.index();
    const p = join(f.dir, `f${f.rng.int(8)}.faiss`);
    await ix?.write(f.chance(0.9) ? p : f.path());
    f.files.push(p);
  },
  read: async (f) => f.pool.push(await readIndex(f.path(), { mmap: f.chance(0.5) })),
  clone: async (f) => {
    const c = await f.index()?.cloneEmpty();
    if (c) f.pool.push(c);
  },
  merge: async (f) => f.index()?.merge(loose(f.chance(0.9) ? f.index() : {})),
  close: async (f) => f.index()?.close(),
  preTransform: async (f) => f.index()?.applyPreTransform(loose(f.vectors(f.index()?.dim ?? 8))),
  setCentroids: async (f) => f.index()?.setCentroids(loose(f.vectors(f.index()?.coarseDim ?? 8))),
  trainCodes: async (f) => f.index()?.trainCodes(loose(f.vectors(f.index()?.dim ?? 8))),
  kmeans: async (f) => {
    const dim = f.pick(DIMS);
    return kmeans(loose(f.vectors(dim)), dim, f.chance(0.7) ? f.rng.int(8) + 1 : f.number(), {
      niter: f.chance(0.8) ? 3 : f.number(),
      ...(f.chance(0.3) ? { spherical: loose<boolean>(f.pick([true, false, 'yes'])) } : {}),
    });
  },
  halfOpen: async (f) => {
    // A new file each time: rewriting a file in place under its own mapping is SIGBUS by design of mmap.
    const path = join(f.dir, `h${f.files.length}-${f.rng.nextUint32()}.f16`);
    writeFileSync(path, new Uint8Array(2 * 8 * f.pick([0, 1, 10, 100]) + f.pick([0, 0, 1, 3])));
    f.halves.push(await HalfVectors.open(f.chance(0.9) ? path : f.path(), f.pick(DIMS)));
    if (f.halves.length > 4) await f.halves.shift()?.close();
  },
  rescore: async (f) => {
    if (f.halves.length === 0) return;
    const h = f.pick(f.halves);
    const q = f.vectors(h.dim);
    const nq = q instanceof Float32Array && h.dim > 0 ? Math.floor(q.length / h.dim) : 1;
    const c = f.ids(nq * f.pick([0, 1, 5]));
    if (c instanceof BigInt64Array && f.chance(0.5) && c.length > 0)
      c[f.rng.int(c.length)] = BigInt(h.count + f.rng.int(5));
    return h.rescore(
      loose(q),
      loose(c),
      f.chance(0.8) ? f.rng.int(5) + 1 : f.number(),
      loose(f.pick(['ip', 'l2', 'x'])),
    );
  },
  halfClose: async (f) => (f.halves.length ? f.pick(f.halves).close() : undefined),
  mapFile: async (f) => mapFile(f.path()),
};

export interface FuzzSummary {
  seed: number;
  ops: number;
  ok: number;
  rejected: number;
  byCode: Record<string, number>;
  findings: string[];
}

/** Runs batches of 1-4 concurrent calls until `seconds` or `maxOps` have passed. */
export async function fuzz(seed: number, seconds: number, maxOps: number): Promise<FuzzSummary> {
  const f = new Fuzz(seed);
  writeFileSync(join(f.dir, 'junk.bin'), 'not an index '.repeat(100));
  writeFileSync(join(f.dir, 'empty.bin'), '');
  const s: FuzzSummary = { seed, ops: 0, ok: 0, rejected: 0, byCode: {}, findings: [] };
  const names = Object.keys(OPS);
  const end = Date.now() + seconds * 1000;
  const trace = process.env.FUZZ_TRACE === '1';
  try {
    while (Date.now() < end && s.ops < maxOps && s.findings.length === 0) {
      const batch = Array.from({ length: 1 + f.rng.int(4) }, () => f.pick(names));
      if (trace) process.stderr.write(`fuzz ${s.ops}: ${batch.join(' ')}\n`);
      const calls = batch.map(async (name) => {
        try {
          await (OPS[name] as Op)(f);
          s.ok++;
        } catch (e) {
          if (!isParamineError(e)) s.findings.push(`${name}: ${(e as Error)?.stack ?? String(e)}`);
          else {
            s.rejected++;
            s.byCode[e.code] = (s.byCode[e.code] ?? 0) + 1;
          }
        }
      });
      s.ops += batch.length;
      await Promise.all(calls);
    }
  } finally {
    if (trace)
      process.stderr.write(`fuzz: closing ${f.pool.length} indexes, ${f.halves.length} half files\n`);
    const closes = [...f.pool.map((x) => x.close()), ...f.halves.map((h) => h.close())];
    if (trace) {
      let left = closes.length;
      closes.forEach((c, i) => {
        void c.finally(() => left--);
        setTimeout(() => {
          void Promise.race([c, Promise.resolve('pending')]).then((v) => {
            if (v === 'pending')
              process.stderr.write(
                `fuzz: close ${i} hangs (${f.pool[i]?.factory} ntotal ${f.pool[i]?.ntotal} closed ${f.pool[i]?.closed})\n`,
              );
          });
        }, 5000).unref();
      });
      setTimeout(() => process.stderr.write(`fuzz: ${left} closes left\n`), 5000).unref();
    }
    await Promise.allSettled(closes);
    rmSync(f.dir, { recursive: true, force: true });
  }
  return s;
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '\0')) {
  const [seed, seconds, maxOps] = process.argv.slice(2).map(Number);
  const summary = await fuzz(seed ?? 1, seconds ?? 30, maxOps ?? 1e9);
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  process.exitCode = summary.findings.length === 0 ? 0 : 1;
}

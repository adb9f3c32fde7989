/**
 * Benchmarks of scoped mining (BENCHMARKS.md, "Scopes"):
 *
 *   node dist/bench/scopes-bench.js nmr [--fillers 8000]   group-scoped vs global mining, MultiPIT NMR sets
 *   node dist/bench/scopes-bench.js crossover              exact (flat over a group) vs index + id selector
 *   node dist/bench/scopes-bench.js calibrate              the encoder's cosine standing for ParaSCI's 0.931
 *   node dist/bench/scopes-bench.js subsentence            extra pairs from best-clause / span-model spans
 *
 * Each writes a JSON result to bench-results/scopes-NAME.json and prints a Markdown table.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPairs } from '../corpus/index.js';
import { Encoder } from '../encode/index.js';
import { buildIndex } from '../indexer/build.js';
import { type MinedPair, pairKey } from '../jobs/index.js';
import { resolveModelDir } from '../models/resolve.js';
import { createIndex, type FaissIndex } from '../native/index.js';
import { openService } from '../service/index.js';
import { parseGroupKeySpec } from '../store/index.js';
import { clusteredDataset, denseIds } from '../testing/index.js';

const DATA = process.env.PARAMINE_DATA ?? '../shared/data';
const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : Number(process.argv[i + 1]);
};
const machine = () => `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, shared with other work`;

function save(name: string, result: object): void {
  mkdirSync('bench-results', { recursive: true });
  writeFileSync(join('bench-results', `scopes-${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
}

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function mine(
  index: string,
  specs: Record<string, object>,
): Promise<Record<string, { pairs: MinedPair[]; seconds: number }>> {
  const service = await openService({ index, reranker: false });
  const jobs = service.openJobs({ dir: join(index, '..', `jobs-${Date.now()}`) });
  const out: Record<string, { pairs: MinedPair[]; seconds: number }> = {};
  try {
    for (const [name, spec] of Object.entries(specs)) {
      const t0 = performance.now();
      const job = await jobs.manager.wait((await jobs.manager.create(spec)).id, undefined, 50);
      const seconds = (performance.now() - t0) / 1000;
      out[name] = { pairs: [...jobs.store.pairs(job.id)].map((p) => p.pair), seconds };
    }
  } finally {
    await service.close();
  }
  return out;
}

/** The NMR sets as trends of their own, and MultiPIT_Auto fillers spread over those trends and as many more. */
async function nmrRows() {
  const sets = Object.entries(
    JSON.parse(readFileSync(join(DATA, 'multipit/nmr/nmr.json'), 'utf8')) as Record<string, string[]>,
  );
  const rand = prng(7);
  const rows: Array<{ text: string; trend: string; set?: number }> = [];
  sets.forEach(([src, refs], i) => {
    for (const text of [src, ...refs]) rows.push({ text, trend: `t${i}`, set: i });
  });
  const nmrTexts = new Set(rows.map((r) => r.text));
  const fillers = arg('fillers', 8000);
  const auto = await readPairs(join(DATA, 'multipit/auto/train.csv'));
  const seen = new Set<string>();
  for (const p of auto) {
    for (const text of [p.s1, p.s2]) {
      if (seen.size >= fillers) break;
      if (seen.has(text) || nmrTexts.has(text)) continue;
      seen.add(text);
      // Fillers land on the NMR trends and on as many other trends.
      rows.push({ text, trend: `t${Math.floor(rand() * sets.length * 2)}` });
    }
  }
  return { sets, rows, nmrTexts, fillers: seen };
}

/** MultiPIT NMR: each source and its references one trend, mixed into MultiPIT_Auto sentences on random trends. */
async function nmr(): Promise<void> {
  const { sets, rows, nmrTexts, fillers: seen } = await nmrRows();
  const dir = mkdtempSync(join(tmpdir(), 'paramine-scopes-nmr-'));
  try {
    const corpus = join(dir, 'corpus.jsonl');
    writeFileSync(corpus, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const index = join(dir, 'index');
    const t0 = performance.now();
    await buildIndex({
      inputs: [corpus],
      out: index,
      model: 'all-minilm-l6-v2',
      quiet: true,
      groupKeys: [parseGroupKeySpec('trend')],
    });
    const buildSeconds = (performance.now() - t0) / 1000;
    const k = arg('k', 10);
    const minCosine = arg('min-cosine', 0.5);
    const runs = await mine(index, {
      global: { k, minCosine, batchSize: 256 },
      withinTrend: { k, minCosine, withinGroup: 'trend', batchSize: 256 },
    });
    // Gold: every pair inside one NMR set.
    const setOf = new Map<string, number>();
    for (const r of rows) if (r.set !== undefined) setOf.set(r.text, r.set);
    let gold = 0;
    for (const [, refs] of sets) gold += ((refs.length + 1) * refs.length) / 2;
    const result: Record<string, unknown> = {
      machine: machine(),
      sentences: rows.length,
      nmrSentences: nmrTexts.size,
      fillers: seen.size,
      goldPairs: gold,
      k,
      minCosine,
      buildSeconds,
    };
    const lines = [
      '| mining | time (s) | pairs | pairs touching an NMR set | gold found | precision | recall |',
      '|---|---|---|---|---|---|---|',
    ];
    for (const [name, r] of Object.entries(runs)) {
      const touching = r.pairs.filter((p) => setOf.has(p.a.text) || setOf.has(p.b.text));
      const hit = new Set(
        touching
          .filter((p) => setOf.has(p.a.text) && setOf.get(p.a.text) === setOf.get(p.b.text))
          .map((p) => pairKey(p.a.id as number, p.b.id as number)),
      ).size;
      const precision = touching.length === 0 ? 0 : hit / touching.length;
      const recall = hit / gold;
      result[name] = {
        seconds: r.seconds,
        pairs: r.pairs.length,
        touching: touching.length,
        hit,
        precision,
        recall,
      };
      lines.push(
        `| ${name} | ${r.seconds.toFixed(1)} | ${r.pairs.length} | ${touching.length} | ${hit} | ${precision.toFixed(3)} | ${recall.toFixed(3)} |`,
      );
    }
    save('nmr', result);
    process.stdout.write(`${lines.join('\n')}\n\n${JSON.stringify(result)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Exact search over one random group of `size` members vs the IVF index restricted to it. */
async function crossoverAt(
  size: number,
  c: {
    corpus: Float32Array;
    n: number;
    dim: number;
    nq: number;
    k: number;
    ivf: FaissIndex;
    rand: () => number;
  },
) {
  const { corpus, n, dim, nq, k, ivf, rand } = c;
  const ids = new Set<number>();
  while (ids.size < size) ids.add(Math.floor(rand() * n));
  const members = [...ids].sort((a, b) => a - b);
  const queries = new Float32Array(nq * dim);
  for (let q = 0; q < nq; q++)
    queries.set(
      corpus.subarray((members[q % size] as number) * dim, ((members[q % size] as number) + 1) * dim),
      q * dim,
    );
  const reps = 3;
  let exactMs = 0;
  let exactIds: BigInt64Array = new BigInt64Array();
  for (let r = 0; r < reps; r++) {
    const t1 = performance.now();
    const vecs = new Float32Array(size * dim);
    members.forEach((id, i) => {
      vecs.set(corpus.subarray(id * dim, (id + 1) * dim), i * dim);
    });
    const flat = createIndex('Flat', dim, 'ip');
    await flat.add(
      vecs,
      BigInt64Array.from(members, (x) => BigInt(x)),
    );
    exactIds = (await flat.search(queries, k)).ids;
    await flat.close();
    exactMs += performance.now() - t1;
  }
  let selMs = 0;
  let selIds: BigInt64Array = new BigInt64Array();
  for (let r = 0; r < reps; r++) {
    const t1 = performance.now();
    selIds = (
      await ivf.search(queries, k, { ids: BigInt64Array.from(members, (x) => BigInt(x)), nprobe: 32 })
    ).ids;
    selMs += performance.now() - t1;
  }
  let agree = 0;
  for (let q = 0; q < nq; q++) {
    const want = new Set(exactIds.slice(q * k, q * k + k));
    for (const id of selIds.slice(q * k, q * k + k)) if (want.has(id)) agree++;
  }
  return { size, exactMs: exactMs / reps, selectorMs: selMs / reps, recall: agree / (nq * k) };
}

/** Exact flat search over a group's vectors vs the IVF-PQ index with an id selector, by group size. */
async function crossover(): Promise<void> {
  const n = arg('n', 100_000);
  const dim = 384;
  const nq = 64;
  const k = 10;
  const { corpus } = clusteredDataset(n, 0, dim, { seed: 5 });
  const factory = process.argv.includes('--factory')
    ? (process.argv[process.argv.indexOf('--factory') + 1] as string)
    : 'IVF1024,PQ48np';
  const ivf = createIndex(factory, dim, 'ip');
  const t0 = performance.now();
  await ivf.train(corpus.subarray(0, Math.min(n, 50_000) * dim));
  await ivf.add(corpus, denseIds(n));
  const buildSeconds = (performance.now() - t0) / 1000;
  const rand = prng(11);
  const result: Record<string, unknown> = {
    machine: machine(),
    n,
    dim,
    factory,
    nq,
    k,
    nprobe: 32,
    buildSeconds,
    sizes: [] as unknown[],
  };
  const lines = [
    '| group size | exact (ms) | index + selector (ms) | selector recall@10 vs exact |',
    '|---|---|---|---|',
  ];
  for (const size of [100, 1000, 5000, 20_000, 50_000, 100_000].filter((s) => s <= n)) {
    const row = await crossoverAt(size, { corpus, n, dim, nq, k, ivf, rand });
    (result.sizes as unknown[]).push(row);
    lines.push(
      `| ${size} | ${row.exactMs.toFixed(1)} | ${row.selectorMs.toFixed(1)} | ${row.recall.toFixed(3)} |`,
    );
    process.stderr.write(`${JSON.stringify(row)}\n`);
  }
  await ivf.close();
  save('crossover', result);
  process.stdout.write(`${lines.join('\n')}\n`);
}

const cosines = (v: Float32Array, dim: number, pairs: Array<[number, number]>) =>
  pairs.map(([a, b]) => {
    let s = 0;
    for (let d = 0; d < dim; d++) s += (v[a * dim + d] as number) * (v[b * dim + d] as number);
    return s;
  });

/** The cosine that keeps the same share of ParaSCI-ACL val pairs as candidates as the paper's 0.931 did. */
async function calibrate(): Promise<void> {
  const pairs = await readPairs(join(DATA, 'parasci/acl/val.src'));
  const texts = pairs.flatMap((p) => [p.s1, p.s2]);
  const encoder = await Encoder.open(resolveModelDir('all-minilm-l6-v2'));
  const v = await encoder.encode(texts);
  const dim = encoder.dim;
  await encoder.close();
  const gold = cosines(
    v,
    dim,
    pairs.map((_, i) => [2 * i, 2 * i + 1]),
  ).sort((a, b) => a - b);
  const rand = prng(3);
  const random = cosines(
    v,
    dim,
    pairs.map(
      () => [Math.floor(rand() * texts.length), Math.floor(rand() * texts.length)] as [number, number],
    ),
  );
  const keep = arg('keep', 0.98);
  const threshold = gold[Math.floor((1 - keep) * gold.length)] as number;
  const q = (p: number) => gold[Math.floor(p * (gold.length - 1))] as number;
  const result = {
    machine: machine(),
    pairs: pairs.length,
    keep,
    threshold,
    goldQuantiles: { p01: q(0.01), p02: q(0.02), p05: q(0.05), p10: q(0.1), p50: q(0.5) },
    randomAbove: random.filter((c) => c >= threshold).length / random.length,
  };
  save('calibrate', result);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

/** Whole-sentence mining vs the same plus best-clause or span-model spans (subsentence-bench.ts). */
async function subsentence(): Promise<void> {
  const { subsentence: run } = await import('./subsentence-bench.js');
  await run({ data: DATA, arg, mine, machine, save });
}

const commands: Record<string, () => Promise<void>> = { nmr, crossover, calibrate, subsentence };
const which = process.argv[2] ?? '';
const run = commands[which];
if (run === undefined) {
  process.stderr.write(`usage: scopes-bench ${Object.keys(commands).join('|')} [options]\n`);
  process.exit(2);
}
await run();

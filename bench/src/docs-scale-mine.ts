/**
 * Mining within aligned documents against mining globally, at a corpus's scale (issue #53's second aim): the
 * docs-scale generator's N documents (planted document pairs holding `perDoc` paraphrase pairs each) as an
 * index of sentences, then
 *  - a global mining job (k nearest of every sentence in the whole index),
 *  - `docs align` over the index by each method (partners 1, the band the data proposes), scored by the
 *    planted document pairs, and a mining job within each one's document pairs,
 * each timed, and scored by the planted sentence pairs they find. The cost of mining within pairs is the
 * alignment's time plus its job's, against the global job's.
 *
 *   npm run -s lab -- docs-scale-mine --n 100000
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { type BenchOutput, defineBenchmark } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { splitSentences } from '../../dist/corpus/split.js';
import { readManifest } from '../../dist/index/index.js';
import { buildIndex } from '../../dist/indexer/build.js';
import { type Alignment, alignOptionsSchema, type DocPair } from '../../dist/jobs/align.js';
import { DEFAULT_BAND } from '../../dist/jobs/align-band.js';
import { alignIndexDir } from '../../dist/jobs/align-index.js';
import type { Neighbours } from '../../dist/jobs/align-search.js';
import { type GroupTables, openIndexSentences } from '../../dist/store/index.js';
import { generate, isPlanted, PERIOD, plantedQuality } from './docs-scale.js';
import { statusKiB } from './proc-status.js';
import { mine } from './scopes-mining.js';

interface AlignRun {
  seconds: number;
  stages: Record<string, number>;
  /** The process's high-water resident set (Linux VmHWM, KiB) at each stage's end: where the peak was reached. */
  highWaterKiB?: Record<string, number>;
  peakRssGiB: number;
  /** At the peak: anonymous and file-backed (Linux). */
  peakParts?: { anonGiB: number; fileGiB: number };
  candidates: { ownSide: number; eitherSide: number } | undefined;
  alignment: Alignment;
}

const schema = z.object({
  data: z.string().min(1),
  n: z.coerce.number().int().min(100),
  perDoc: z.coerce.number().int().min(1),
  plants: z.enum(['close', 'auto']),
  k: z.coerce.number().int().min(1),
  minCosine: z.coerce.number().min(-1).max(1),
  globalRecall: z.coerce.number().gt(0).max(1).optional(),
  globalPlanted: z.boolean().default(false),
  globalShare: z.coerce.number().gt(0).max(1).default(1),
  alignOnly: z.boolean().default(false),
  // hybrid-joint: `docs align --method hybrid` (since 2026-12-05 its search vectors estimate the hybrid score);
  // hybrid: TF-IDF's candidates re-scored by it (AlignHooks.jointSearch false), the method before that.
  methods: z.array(z.union([alignOptionsSchema.shape.method.unwrap(), z.literal('hybrid-joint')])).min(1),
  work: z.string().min(1).optional(),
});
type Options = z.output<typeof schema>;

/** Each planted sentence's pieces (as the index splits them) name their pair and side. */
export function plantedIndex(pairs: ReadonlyArray<readonly [string, string]>) {
  const pieceOf = new Map<string, Array<{ pair: number; side: 0 | 1 }>>();
  pairs.forEach((p, pair) => {
    for (const side of [0, 1] as const) {
      for (const piece of splitSentences(p[side])) {
        const list = pieceOf.get(piece.text) ?? [];
        list.push({ pair, side });
        pieceOf.set(piece.text, list);
      }
    }
  });
  /** The planted pair a mined pair joins (one side's piece each), or -1. */
  return (a: string, b: string): number => {
    for (const x of pieceOf.get(a) ?? []) {
      for (const y of pieceOf.get(b) ?? []) if (x.pair === y.pair && x.side !== y.side) return x.pair;
    }
    return -1;
  };
}

/**
 * The sentence ids of the planted documents (rows below `planted` x PERIOD come first in the corpus): every
 * planted pair's both sides are in [0, end), so a global job querying only those finds every planted pair a
 * job querying all would (a pair is found from either side's query) at a share of its cost.
 */
function plantedRange(index: string, planted: number, n: number): Promise<{ start: number; end: number }> {
  return withDocGroups(index, (groups, ntotal) => {
    for (let row = planted * PERIOD; row < n; row++) {
      const ids = groups.ids('doc', `d${row}`);
      if (ids.length > 0) return { start: 0, end: Math.min(...ids) };
    }
    return { start: 0, end: ntotal };
  });
}

/** The generator's row of each document the alignment numbers (its DocumentSet: the `doc` groups in order). */
function documentRows(index: string): Promise<Int32Array> {
  return withDocGroups(index, (groups) =>
    Int32Array.from(groups.groups('doc'), (g) => Number(String(g.value).slice(1))),
  );
}

/** `use` over the index's group tables (it was built from documents), opened for the call. */
async function withDocGroups<T>(index: string, use: (groups: GroupTables, ntotal: number) => T): Promise<T> {
  const manifest = await readManifest(index);
  const { groups, close } = openIndexSentences(index, manifest);
  try {
    if (groups === undefined) throw new Error(`${index} has no document groups`);
    return use(groups, manifest.ntotal);
  } finally {
    await close();
  }
}

/**
 * Each document's nearest two (the first is what the band is chosen on; the second is a chance score even
 * for a document with a partner), for studying band rules without aligning again: 16 bytes a document, its
 * generator row and its nearest's (int32, -1: none) and the two scores (float32, 0: none).
 */
function nearestRows(nearest: Neighbours, rows: Int32Array): Uint8Array {
  const { docs, k, ids, scores } = nearest;
  const out = new DataView(new ArrayBuffer(16 * docs.length));
  docs.forEach((d, r) => {
    const j = ids[r * k] as number;
    out.setInt32(16 * r, rows[d] as number, true);
    out.setInt32(16 * r + 4, j < 0 ? -1 : (rows[j] as number), true);
    for (const h of [0, 1]) {
      const score = h < k && (ids[r * k + h] as number) >= 0 ? (scores[r * k + h] as number) : 0;
      out.setFloat32(16 * r + 8 + 4 * h, score, true);
    }
  });
  return new Uint8Array(out.buffer);
}

/**
 * The planted document pairs whose partner is among the candidates the pairs are chosen from: from one side's
 * list (each side counted) and from either side's: what any band could keep at best.
 */
function plantedAmongCandidates(nearest: Neighbours, rows: Int32Array, planted: number) {
  const setRow = new Map<number, number>();
  rows.forEach((row, r) => {
    if (isPlanted(row, row % PERIOD === 0 ? row + 1 : row - 1, planted)) setRow.set(row, r);
  });
  const listOf = new Map<number, number>();
  nearest.docs.forEach((d, x) => {
    if (setRow.has(rows[d] as number)) listOf.set(d, x);
  });
  const lists = (a: number | undefined, b: number | undefined) => {
    const x = a === undefined ? undefined : listOf.get(a);
    if (x === undefined || b === undefined) return false;
    return nearest.ids.subarray(x * nearest.k, (x + 1) * nearest.k).includes(b);
  };
  let [own, either] = [0, 0];
  for (let p = 0; p < planted; p++) {
    const [a, b] = [setRow.get(p * PERIOD), setRow.get(p * PERIOD + 1)];
    const [ab, ba] = [lists(a, b), lists(b, a)];
    own += Number(ab) + Number(ba);
    either += Number(ab || ba);
  }
  return { ownSide: own / (2 * planted), eitherSide: either / planted };
}

/** The process's resident set, and (Linux) its anonymous and file-backed parts, in bytes. */
interface Resident {
  rss: number;
  anon?: number;
  file?: number;
}

function residentSet(): Resident {
  const rss = process.memoryUsage().rss;
  const parts = statusKiB(['RssAnon', 'RssFile']);
  return parts === undefined
    ? { rss }
    : { rss, anon: (parts[0] as number) * 1024, file: (parts[1] as number) * 1024 };
}

/**
 * The highest RSS sampled while something runs (every 250 ms; the alignment lets the event loop go every
 * slice): its own peak, where the process's (getrusage) would include a build run before it. With its
 * anonymous and file-backed parts at that peak: file pages (the sentence store's memory map) are page cache
 * the kernel takes back under pressure, anonymous ones are not.
 */
function rssPeak() {
  let peak = residentSet();
  const sample = () => {
    const now = residentSet();
    if (now.rss > peak.rss) peak = now;
  };
  const timer = setInterval(sample, 250);
  return {
    stop(): Resident {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

/**
 * Each stage's seconds, from its first progress report to the next stage's (the last: to `end`), and the
 * process's high-water mark as each stage ends (read as the next begins): the sampler can miss a short peak,
 * the kernel's mark cannot, and a run that did not build in the same process starts below it.
 */
function stageClock() {
  const starts = new Map<string, number>();
  const marks: Array<[string, number]> = [];
  const mark = (label: string) => {
    const hwm = statusKiB(['VmHWM'])?.[0];
    if (hwm !== undefined && hwm > 0) marks.push([label, hwm]);
  };
  mark('start');
  return {
    onProgress: (stage: string) => {
      if (starts.has(stage)) return;
      mark(`before ${stage}`);
      starts.set(stage, performance.now());
    },
    highWater(): Record<string, number> {
      mark('end');
      return Object.fromEntries(marks);
    },
    seconds(end: number): Record<string, number> {
      const sorted = [...starts].sort((x, y) => x[1] - y[1]);
      return Object.fromEntries(
        sorted.map(([stage, at], i) => [stage, Math.round(((sorted[i + 1]?.[1] ?? end) - at) / 100) / 10]),
      );
    },
  };
}

/**
 * Alignments run from this --min, so that every cut above it can be scored; the band the data proposes is
 * applied afterwards (partners are chosen best first, so the pairs above any cut are the ones aligning at it
 * gives). The proposal is computed from the nearest partners' scores whatever --min is given.
 */
const FLOOR = 0.3;

/** The band the data proposes (absent: the default), which `docs align` without --min uses. */
const proposedMin = (a: Alignment) => a.band.proposed.min?.at ?? DEFAULT_BAND.min;

/** Planted document pairs among `pairs` (ids `d<row>`): at the proposed band, and at the best cut from FLOOR. */
function alignedQuality(a: Alignment, planted: number) {
  const row = (id: string) => Number(id.slice(1));
  const right = (p: DocPair) => isPlanted(row(p.a), row(p.b), planted);
  return plantedQuality(a.pairs, right, planted, proposedMin(a), FLOOR);
}

async function run(o: Options): Promise<BenchOutput<Record<string, unknown>>> {
  const loadBefore = loadavg();
  const dir = o.work ?? mkdtempSync(join(tmpdir(), 'paramine-docs-scale-mine-'));
  mkdirSync(dir, { recursive: true });
  try {
    const corpus = join(dir, 'docs.jsonl');
    // The same documents every time (the generator is seeded), so a kept index is theirs.
    const { planted, pairs: plantedPairs } = await generate(o, corpus, true);
    const index = join(dir, 'index');
    const b0 = performance.now();
    // Alignment alone reads the sentences' vectors, not the index's search: its tuning (over 40 min at 10^6
    // documents on 2 cores) waits for the run that mines, which tunes the kept index when it resumes.
    await buildIndex({
      inputs: [corpus],
      out: index,
      documents: true,
      quiet: true,
      resume: true,
      tune: !o.alignOnly,
    });
    const buildSeconds = (performance.now() - b0) / 1000;
    const manifest = await readManifest(index);
    const alignments: Record<string, AlignRun> = {};
    let order: Int32Array | undefined;
    for (const method of o.methods) {
      // With --work an alignment cut short resumes from its checkpoint, and a finished one is read back.
      const done = join(dir, `aligned-${method}.json`);
      if (o.work !== undefined && existsSync(done)) {
        alignments[method] = JSON.parse(readFileSync(done, 'utf8'));
        continue;
      }
      const work = o.work === undefined ? undefined : join(dir, `align-${method}`);
      const clock = stageClock();
      const rss = rssPeak();
      const a0 = performance.now();
      const { nearest, ...alignment } = await alignIndexDir(
        index,
        { partners: 1, autoBand: true, min: FLOOR, method: method === 'hybrid-joint' ? 'hybrid' : method },
        { work, onProgress: clock.onProgress, jointSearch: method === 'hybrid-joint' },
      );
      const end = performance.now();
      const peak = rss.stop();
      const peakRssGiB = peak.rss / 2 ** 30;
      const peakParts =
        peak.anon === undefined
          ? undefined
          : { anonGiB: peak.anon / 2 ** 30, fileGiB: (peak.file ?? 0) / 2 ** 30 };
      if (nearest !== undefined && order === undefined) order = await documentRows(index);
      const candidates = nearest && order && plantedAmongCandidates(nearest, order, planted);
      if (nearest !== undefined && order !== undefined && o.work !== undefined)
        writeFileSync(join(dir, `nearest-${method}.bin`), nearestRows(nearest, order));
      alignments[method] = {
        seconds: (end - a0) / 1000,
        stages: clock.seconds(end),
        highWaterKiB: clock.highWater(),
        peakRssGiB,
        ...(peakParts === undefined ? {} : { peakParts }),
        candidates,
        alignment,
      };
      writeFileSync(done, JSON.stringify(alignments[method]));
    }
    // Each alignment's pairs at the band the data proposes: what the mining jobs read.
    const atBand = Object.fromEntries(
      Object.entries(alignments).map(([method, { alignment }]) => [
        method,
        alignment.pairs.filter((p) => p.score >= proposedMin(alignment)),
      ]),
    );
    for (const [method, kept] of Object.entries(atBand))
      writeFileSync(join(dir, `aligned-${method}.jsonl`), kept.map((p) => `${JSON.stringify(p)}\n`).join(''));
    const spec = { k: o.k, minCosine: o.minCosine, batchSize: 256 };
    const within = (m: string) => `within ${m}-aligned document pairs`;
    // With --global-planted the global job queries the planted documents' sentences only, and its time is
    // scaled to all of the index's (queries cost alike: each searches the whole index).
    // --global-share: the first share of the planted document pairs only; every job's recall is then also
    // given over the planted pairs that share holds, the global job's only measure.
    const shared = Math.ceil(planted * o.globalShare);
    const sharedPairs = shared * o.perDoc;
    const range = o.globalPlanted ? await plantedRange(index, shared, o.n) : undefined;
    const globalScale = range === undefined ? 1 : manifest.ntotal / range.end;
    const globalSpec = {
      ...spec,
      ...(range === undefined ? {} : { scope: { kind: 'range', ...range } }),
      // The operating point asked for (else the index's tuned one, as a user's job runs).
      ...(o.globalRecall === undefined ? {} : { recall: o.globalRecall }),
    };
    const runs = o.alignOnly
      ? {}
      : await mine(
          index,
          Object.fromEntries([
            ['global', globalSpec],
            ...o.methods.map((m) => [within(m), { ...spec, docPairs: { path: `aligned-${m}.jsonl` } }]),
          ]),
          dir,
        );
    const plantedOf = plantedIndex(plantedPairs);
    const rows: Record<string, Record<string, number>> = {};
    for (const [name, r] of Object.entries(runs)) {
      const hits = r.pairs.map((p) => plantedOf(p.a.text, p.b.text)).filter((i) => i >= 0);
      const found = new Set(hits).size;
      const foundShared = new Set(hits.filter((i) => i < sharedPairs)).size;
      const method = o.methods.find((m) => within(m) === name);
      const alignSeconds = method === undefined ? 0 : (alignments[method]?.seconds ?? 0);
      const scale = name === 'global' ? globalScale : 1;
      rows[name] = {
        seconds: r.seconds * scale + alignSeconds,
        measuredSeconds: r.seconds + alignSeconds,
        alignSeconds,
        jobSeconds: r.seconds,
        pairs: r.pairs.length,
        found,
        recall: found / plantedPairs.length,
        recallShared: foundShared / sharedPairs,
        precision: r.pairs.length ? hits.length / r.pairs.length : 0,
      };
    }
    const global = rows.global;
    const f = (x: number) => x.toFixed(3);
    const docRows = Object.entries(alignments).map(
      ([method, { seconds, stages, highWaterKiB, peakRssGiB, peakParts, candidates, alignment }]) => {
        const q = alignedQuality(alignment, planted);
        return {
          method,
          seconds,
          stages,
          highWaterKiB,
          peakRssGiB,
          peakParts,
          candidates,
          pairs: atBand[method]?.length ?? 0,
          // A run cut short and resumed: its seconds are the last run's only.
          resumed: (alignment.resumed?.index ?? false) || (alignment.resumed?.searched ?? 0) > 0,
          band: { min: proposedMin(alignment), max: alignment.band.max },
          // No proposal: the default --min, below FLOOR, so the pairs between are not scored.
          bandProposed: alignment.band.proposed.min !== undefined,
          ...q,
        };
      },
    );
    const docTable = docRows.map(
      (d) =>
        `| ${d.method} | ${d.seconds.toFixed(1)}${d.resumed ? ' (resumed)' : ''} | ${d.peakRssGiB.toFixed(2)} GiB${d.peakParts ? ` (anon ${d.peakParts.anonGiB.toFixed(2)}, file ${d.peakParts.fileGiB.toFixed(2)})` : ''} | [${d.band.min}, ${d.band.max})${d.bandProposed ? '' : ` (none proposed; scored from ${FLOOR})`} | ${d.pairs} | ` +
        `P ${f(d.proposed.precision)}, R ${f(d.proposed.recall)} | ${d.best.min}: P ${f(d.best.precision)}, R ${f(d.best.recall)}, F1 ${f(d.best.f1)} | ` +
        `${d.atPrecision80 ? `${d.atPrecision80.min}: R ${f(d.atPrecision80.recall)} (P ${f(d.atPrecision80.precision)})` : 'none'} | ` +
        `${d.candidates ? `${f(d.candidates.eitherSide)} (one side's: ${f(d.candidates.ownSide)})` : '-'} |`,
    );
    const stageLines = docRows.map(
      (d) =>
        `${d.method}: ${Object.entries(d.stages)
          .map(([stage, sec]) => `${stage} ${sec} s`)
          .join(', ')}${
          d.highWaterKiB === undefined
            ? ''
            : ` (the process's high-water mark, KiB: ${Object.entries(d.highWaterKiB)
                .map(([at, kib]) => `${at} ${kib}`)
                .join(', ')})`
        }`,
    );
    const table = Object.entries(rows).map(
      ([name, m]) =>
        `| ${name} | ${(m.seconds as number).toFixed(1)}${name === 'global' ? '' : ` (align ${(m.alignSeconds as number).toFixed(1)} + job ${(m.jobSeconds as number).toFixed(1)})`} | ${m.pairs} | ${m.found} | ${f(m.recall as number)} | ${f(m.recallShared as number)} | ${f(m.precision as number)} |`,
    );
    const against = Object.entries(rows)
      .filter(([name]) => name !== 'global' && global !== undefined)
      .map(
        ([name, m]) =>
          `${name}: recall ${f((m.recallShared as number) - (global?.recallShared as number))} from the global job's (over its share's planted pairs), ` +
          `at ${f((m.seconds as number) / (global?.seconds as number))} of its time (alignment included)`,
      );
    const point = manifest.search;
    const markdown =
      `${o.n} documents, ${manifest.ntotal} sentences (index ${manifest.factory}, built in ${(buildSeconds / 60).toFixed(1)} min; ` +
      `its ${manifest.operatingPoints ? 'tuned' : 'planned (untuned)'} search: nprobe ${point?.nprobe}, kFactor ${point?.kFactor}; the global job's: ${o.globalRecall === undefined ? 'that' : `the cheapest reaching recall@10 ${o.globalRecall}`}), ` +
      (range === undefined || global === undefined
        ? ''
        : `the global job queried the sentences of the first ${shared} of the ${planted} planted document pairs' share of the corpus, ${range.end} (its seconds scaled by ${globalScale.toFixed(2)} to all ${manifest.ntotal}: measured ${global.measuredSeconds?.toFixed(1)} s), `) +
      `${planted} planted document pairs holding ${plantedPairs.length} planted paraphrase pairs.\n\n` +
      `| docs align (partners 1, the proposed band) | seconds | peak RSS (sampled) | band | pairs | planted document pairs at the band | best --min (F1; cuts from ${FLOOR}) | most recall at P >= 0.8 | planted pairs among the candidates |\n` +
      `|---|---:|---:|---|---:|---|---|---|---:|\n${docTable.join('\n')}\n\n` +
      `stages (seconds from each one's first progress report): ${stageLines.join('; ')}\n\n` +
      `| mining (k ${o.k}, cosine >= ${o.minCosine}) | seconds | pairs | planted pairs found | recall | recall of the ${sharedPairs} in the global job's share | precision (pairs joining a planted pair's sides) |\n` +
      `|---|---:|---:|---:|---:|---:|---:|\n${table.join('\n')}\n\n` +
      `${against.join('\n\n')}\n`;
    return {
      result: {
        machine: machineInfo(loadBefore),
        options: o,
        documents: o.n,
        sentences: manifest.ntotal,
        factory: manifest.factory,
        planted: plantedPairs.length,
        plantedDocumentPairs: planted,
        buildSeconds,
        globalRange: range ?? null,
        globalShare: { documentPairs: shared, pairs: sharedPairs },
        globalScale,
        align: docRows,
        mining: rows,
      },
      markdown,
    };
  } finally {
    if (o.work === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

export const docsScaleMine = defineBenchmark({
  name: 'docs-scale-mine',
  description: 'docs-scale documents as an index: mining within the aligned pairs against global mining',
  options: (cmd) =>
    cmd
      .option('--data <dir>', 'the shared data', '../shared/data')
      .option('--n <n>', 'documents', '100000')
      .option('--per-doc <n>', 'planted paraphrase pairs a planted document pair holds', '3')
      .option(
        '--plants <set>',
        'planted pairs: close (ParaSCI, MRPC) or auto (MultiPIT_Auto, lexically far)',
        'close',
      )
      .option('--k <n>', 'neighbours per sentence, both minings', '5')
      .option('--min-cosine <x>', 'both minings', '0.5')
      .option(
        '--methods <list>',
        'docs align methods, each aligned and mined within (comma-separated)',
        (v: string) => v.split(','),
        ['tfidf', 'mean'],
      )
      .option(
        '--global-recall <r>',
        "the global job's operating point: the cheapest reaching this recall@10 (default: the index's tuned one)",
      )
      .option(
        '--global-planted',
        "the global job queries the planted documents' sentences only (every planted pair's sides), its time scaled to the whole index",
      )
      .option(
        '--global-share <x>',
        'with --global-planted: the first share of the planted document pairs only (recall compared over their pairs)',
        '1',
      )
      .option('--align-only', 'align and score the document pairs, no mining jobs')
      .option('--work <dir>', 'keep the corpus and index there (a rerun resumes or reuses the build)'),
  schema,
  run: async (o) => run(o),
});

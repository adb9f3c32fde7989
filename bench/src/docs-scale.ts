/**
 * Document alignment at a corpus's scale (issue #53): N documents of a few sentences each, generated from
 * ../shared/data, with planted pairs - every 20th and 21st document (10%) hold the two sides of `perDoc`
 * paraphrase pairs (ParaSCI-ACL train, MultiPIT_Auto train) and one filler sentence each; the rest hold
 * filler only: sentences spliced from word runs (3-6 words) of random sentences of the same sets, so that no
 * two documents share a sentence by chance and the character n-grams stay those of real text. Then:
 *  - `alignDocumentSet` (what `docs align` runs) with the band the data proposes (--auto-band), partners 1:
 *    wall time, peak RSS, the planted pairs' precision and recall, and the best --min above the proposal;
 *  - each document's nearest lists against exact TF-IDF cosine, on a sample of documents: the reference is
 *    the exact cosine over each sample document's `refDepth` nearest by brute force in the projection
 *    (a full sparse scan of 10^4 x 10^6 pairs is hours in JS), and the report says how deep in that list the
 *    exact partners were found, so the depth's sufficiency is visible.
 *
 *   npm run -s lab -- docs-scale --n 1000000 --sample 10000
 */
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { type BenchOutput, defineBenchmark } from '../../dist/bench/harness.js';
import { machineInfo } from '../../dist/bench/machine.js';
import { readPairs } from '../../dist/corpus/index.js';
import { exactTopK, prng, sampleIds } from '../../dist/index/index.js';
import { bandText } from '../../dist/jobs/align-band.js';
import { DocGrams } from '../../dist/jobs/align-grams.js';
import { alignOptionsSchema } from '../../dist/jobs/align-options.js';
import { alignDocumentSet, type DocumentSet } from '../../dist/jobs/align-pairs.js';
import { NEAREST_UNITS } from '../../dist/jobs/align-search.js';
import { stagedProgress } from '../../dist/progress.js';

const schema = z.object({
  data: z.string().min(1),
  n: z.coerce.number().int().min(100),
  perDoc: z.coerce.number().int().min(1),
  sample: z.coerce.number().int().min(10),
  refDepth: z.coerce.number().int().min(10),
  dim: z.coerce.number().int().min(32),
  plants: z.enum(['close', 'auto']),
  dump: z.string().min(1).optional(),
  work: z.string().min(1).optional(),
});
type Options = z.output<typeof schema>;

/** Every PERIOD documents, the first two are a planted pair. */
export const PERIOD = 20;

function lines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
}

type Pair = [string, string];

/** ParaSCI-ACL train, ParaSCI-arXiv val and MRPC's positives (lexically close), or MultiPIT_Auto (BLEU <= 14). */
async function pools(o: GenerateOptions, rand: () => number): Promise<{ pairs: Pair[]; words: string[][] }> {
  const aligned = (name: string): Pair[] => {
    const tgt = lines(join(o.data, `${name}.tgt`));
    return lines(join(o.data, `${name}.src`)).map((x, i): Pair => [x, tgt[i] ?? '']);
  };
  const mrpc = lines(join(o.data, 'mrpc/train.tsv'))
    .slice(1)
    .map((l) => l.split('\t'))
    .filter((c) => c[0] === '1')
    .map((c): Pair => [c[3] ?? '', c[4] ?? '']);
  const auto = (await readPairs(join(o.data, 'multipit/auto/train.csv'))).map((p): Pair => [p.s1, p.s2]);
  const close = [...aligned('parasci/acl/train'), ...aligned('parasci/arxiv/val'), ...mrpc];
  const valid = (ps: Pair[]) => ps.filter(([a, b]) => a !== '' && b !== '' && a !== b);
  const pairs = valid(o.plants === 'close' ? close : auto);
  for (let i = pairs.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [pairs[i], pairs[j]] = [pairs[j] as Pair, pairs[i] as Pair];
  }
  // Every planted sentence once: ParaSCI repeats a source sentence across its pairs, and two documents sharing
  // it would be a pair nobody planted.
  const seen = new Set<string>();
  const key = (t: string) => t.trim().toLowerCase();
  const fresh = pairs.filter(([a, b]) => {
    if (seen.has(key(a)) || seen.has(key(b))) return false;
    seen.add(key(a));
    seen.add(key(b));
    return true;
  });
  const words = [...close, ...auto]
    .flatMap(([a, b]) => [a.split(/\s+/), b.split(/\s+/)])
    .filter((w) => w.length >= 3);
  return { pairs: fresh, words };
}

/** A filler sentence: three runs of 3-6 words from random sentences. */
function filler(words: string[][], rand: () => number): string {
  const out: string[] = [];
  for (let run = 0; run < 3; run++) {
    const s = words[Math.floor(rand() * words.length)] as string[];
    const len = Math.min(s.length, 3 + Math.floor(rand() * 4));
    const at = Math.floor(rand() * (s.length - len + 1));
    out.push(...s.slice(at, at + len));
  }
  const text = out.join(' ').replace(/[.!?]+$/, '');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** Options of the generator (the lab's, or another lab's that builds on it). */
export type GenerateOptions = Pick<Options, 'data' | 'n' | 'perDoc' | 'plants'>;

/**
 * The documents written one a line to `path`; their byte offsets; the number of planted pairs and their
 * sentence pairs (planted document pair p holds pairs p * perDoc ...). `jsonl`: one `{doc, text}` a line,
 * the sentences as paragraphs (an index built from it keeps each whole).
 */
export async function generate(
  o: GenerateOptions,
  path: string,
  jsonl = false,
): Promise<{ offsets: Float64Array; planted: number; pairs: Array<[string, string]> }> {
  const rand = prng(53);
  const { pairs, words } = await pools(o, rand);
  const planted = Math.min(Math.floor(o.n / PERIOD), Math.floor(pairs.length / o.perDoc));
  const fd = openSync(path, 'w');
  const offsets = new Float64Array(o.n + 1);
  let at = 0;
  for (let r = 0; r < o.n; r++) {
    const p = Math.floor(r / PERIOD);
    const side = r % PERIOD;
    const sentences: string[] = [];
    if (side < 2 && p < planted) {
      for (let s = 0; s < o.perDoc; s++)
        sentences.push((pairs[p * o.perDoc + s] as [string, string])[side] as string);
      sentences.splice(Math.floor(rand() * (o.perDoc + 1)), 0, filler(words, rand));
    } else {
      for (let s = 0; s <= o.perDoc; s++) sentences.push(filler(words, rand));
    }
    const text = sentences.map((t) => t.replace(/\n/g, ' '));
    const line = jsonl
      ? `${JSON.stringify({ doc: `d${r}`, text: text.join('\n\n') })}\n`
      : `${text.join(' ')}\n`;
    at += writeSync(fd, line);
    offsets[r + 1] = at;
  }
  closeSync(fd);
  return { offsets, planted, pairs: pairs.slice(0, planted * o.perDoc) };
}

/** Documents read back from the generated file (nothing of them held in memory but the offsets). */
function fileSet(path: string, offsets: Float64Array): DocumentSet & { close(): void } {
  const fd = openSync(path, 'r');
  const none = Object.freeze({});
  return {
    count: offsets.length - 1,
    id: (r) => String(r),
    text: (r) => {
      const from = offsets[r] as number;
      const buf = Buffer.allocUnsafe((offsets[r + 1] as number) - from - 1);
      readSync(fd, buf, 0, buf.length, from);
      return buf.toString('utf8');
    },
    meta: () => none,
    close: () => closeSync(fd),
  };
}

export const isPlanted = (a: number, b: number, planted: number) =>
  Math.floor(a / PERIOD) === Math.floor(b / PERIOD) &&
  Math.floor(a / PERIOD) < planted &&
  a % PERIOD < 2 &&
  b % PERIOD < 2 &&
  a !== b;

/** Each sample document's exact-cosine top `m` over the reference depth, and where in the projection they ranked. */
async function reference(
  set: DocumentSet,
  sample: number[],
  o: Options,
  m: number,
): Promise<{ top: Ref[][] }> {
  const grams = new DocGrams();
  for (let r = 0; r < set.count; r++) grams.add(set.text(r));
  await grams.finish();
  const source = {
    count: set.count,
    dim: o.dim,
    read: async (first: number, count: number) =>
      grams.project(
        Int32Array.from({ length: count }, (_, i) => first + i),
        o.dim,
      ),
    readIds: async (ids: readonly number[]) => grams.project(ids, o.dim),
  };
  const ids = await exactTopK(source, grams.project(sample, o.dim), o.refDepth, 'ip', {
    batchRows: 65_536,
    excludeIds: sample,
  });
  const top = sample.map((q, s) => {
    const scored: Ref[] = [];
    for (let h = 0; h < o.refDepth; h++) {
      const j = Number(ids[s * o.refDepth + h]);
      if (j >= 0 && j !== q) scored.push({ j, rank: h, score: grams.cosine(q, j) });
    }
    return scored.sort((x, y) => y.score - x.score).slice(0, m);
  });
  return { top };
}

/**
 * Planted document pairs' precision and recall at the band's `min`, the best --min (F1) on a 0.01 grid from
 * `from` (the pairs must reach down to it), and the most recall any of those cuts keeps at precision >= 0.8.
 */
export function plantedQuality<P extends { score: number }>(
  pairs: readonly P[],
  isRight: (p: P) => boolean,
  planted: number,
  min: number,
  from = min,
) {
  const right = pairs.filter(isRight);
  const quality = (at: number) => {
    const kept = pairs.filter((p) => p.score >= at).length;
    const hits = right.filter((p) => p.score >= at).length;
    const precision = kept ? hits / kept : 0;
    const recall = hits / planted;
    return {
      min: at,
      pairs: kept,
      precision,
      recall,
      f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0,
    };
  };
  const steps = Math.max(40, Math.ceil((min - from) / 0.01) + 40);
  const grid = Array.from({ length: steps }, (_, i) => quality(Math.round((from + i * 0.01) * 100) / 100));
  const precise = grid.filter((q) => q.precision >= 0.8);
  return {
    proposed: quality(min),
    best: grid.reduce((x, y) => (y.f1 > x.f1 ? y : x)),
    atPrecision80: precise.length ? precise.reduce((x, y) => (y.recall > x.recall ? y : x)) : null,
  };
}

interface Ref {
  j: number;
  /** Where the projection's brute force ranked it. */
  rank: number;
  score: number;
}

async function run(o: Options): Promise<BenchOutput<Record<string, unknown>>> {
  const loadBefore = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'paramine-docs-scale-'));
  try {
    const path = join(dir, 'docs.txt');
    const g0 = performance.now();
    const { offsets, planted } = await generate(o, path);
    const generateSeconds = (performance.now() - g0) / 1000;
    const set = fileSet(path, offsets);
    const rssBefore = process.memoryUsage().rss;
    const progress = stagedProgress('docs align', NEAREST_UNITS);
    const a0 = performance.now();
    const options = alignOptionsSchema.parse({ partners: 1, autoBand: true, dim: o.dim });
    // Each stage's first and last report: where the time goes.
    const stages = new Map<string, [number, number]>();
    // As `docs align` runs: its work kept (here in the lab's temporary directory unless --work names one).
    const alignment = await alignDocumentSet(set, options, {
      work: o.work ?? join(dir, 'work'),
      onProgress: (stage, done, total, readBack) => {
        const now = performance.now();
        stages.set(stage, [stages.get(stage)?.[0] ?? now, now]);
        progress.update(stage, done, total, readBack);
      },
    });
    const stageSeconds = Object.fromEntries([...stages].map(([s, [a, b]]) => [s, Math.round(b - a) / 1000]));
    progress.stop();
    const alignSeconds = (performance.now() - a0) / 1000;
    const peakRssBytes = process.resourceUsage().maxRSS * 1024;
    const { pairs, band } = alignment;
    const nearest = alignment.nearest!;
    if (o.dump !== undefined) {
      const rows = ['score\tsecond\tplanted\tpartner'];
      for (let r = 0; r < set.count; r++) {
        const j = nearest.ids[r * nearest.k] as number;
        const twin = r % PERIOD < 2 && Math.floor(r / PERIOD) < planted;
        rows.push(
          `${nearest.scores[r * nearest.k]}\t${nearest.scores[r * nearest.k + 1]}\t${twin ? 1 : 0}\t${isPlanted(r, j, planted) ? 1 : 0}`,
        );
      }
      writeFileSync(o.dump, `${rows.join('\n')}\n`);
    }
    const { proposed, best } = plantedQuality(
      pairs,
      (p) => isPlanted(Number(p.a), Number(p.b), planted),
      planted,
      band.min,
    );

    // Nearest lists against exact TF-IDF cosine on a sample.
    const sample = sampleIds(set.count, Math.min(o.sample, set.count), 7);
    const r0 = performance.now();
    const ref = await reference(set, sample, o, 3);
    const refSeconds = (performance.now() - r0) / 1000;
    // Recall of the exact top m (those at or above `min`) in each sample document's nearest list.
    const recallAt = (m: number, min: number) => {
      let hit = 0;
      let total = 0;
      let deepest = 0;
      sample.forEach((q, s) => {
        const want = (ref.top[s] as Ref[]).slice(0, m).filter((x) => x.score >= min);
        const got = new Set<number>();
        for (let h = 0; h < Math.min(m, nearest.k); h++) got.add(nearest.ids[q * nearest.k + h] as number);
        total += want.length;
        hit += want.filter((x) => got.has(x.j)).length;
        for (const x of want) deepest = Math.max(deepest, x.rank);
      });
      return { recall: total ? hit / total : 0, partners: total, deepest };
    };
    // In the band the data proposes, or (where it proposes none) at the best --min: the partners a user keeps.
    const cut = band.from.min === 'data' ? band.min : best.min;
    const lists = {
      cut,
      inBand1: recallAt(1, cut),
      inBand3: recallAt(3, cut),
      all1: recallAt(1, -1),
      all3: recallAt(3, -1),
    };
    // Each planted document's partner among its candidates (they are scored exactly once found).
    let found = 0;
    for (let r = 0; r < set.count; r++) {
      if (r % PERIOD >= 2 || Math.floor(r / PERIOD) >= planted) continue;
      const twin = r % PERIOD === 0 ? r + 1 : r - 1;
      if (nearest.ids.subarray(r * nearest.k, (r + 1) * nearest.k).includes(twin)) found++;
    }
    const candidateRecall = found / (2 * planted);
    set.close();
    const f = (x: number) => x.toFixed(3);
    const result = {
      machine: machineInfo(loadBefore),
      options: o,
      documents: set.count,
      planted,
      generateSeconds,
      alignSeconds,
      stageSeconds,
      resumed: alignment.resumed,
      peakRssBytes,
      rssBeforeBytes: rssBefore,
      band: { min: band.min, max: band.max, from: band.from },
      proposed,
      best,
      partnerRecall: lists,
      candidateRecall,
      reference: { seconds: refSeconds, depth: o.refDepth },
    };
    const markdown =
      `${set.count} documents (${planted} planted pairs, ${o.perDoc} paraphrase pairs + 1 filler sentence a side; ` +
      `the rest filler), generated in ${generateSeconds.toFixed(0)} s.\n\n` +
      `| docs align (tfidf, dim ${o.dim}, partners 1, --auto-band) | value |\n|---|---:|\n` +
      `| wall time | ${(alignSeconds / 60).toFixed(1)} min (${Object.entries(stageSeconds)
        .map(([s, x]) => `${s} ${(x / 60).toFixed(1)}`)
        .join(
          ', ',
        )} min)${alignment.resumed?.index ? `; resumed: the index and ${alignment.resumed.searched} documents' lists read back` : ''} |\n` +
      `| peak RSS of the process | ${(peakRssBytes / 2 ** 30).toFixed(2)} GiB (before the alignment: ${(rssBefore / 2 ** 30).toFixed(2)} GiB) |\n` +
      `| band proposed | [${band.min}, ${band.max}) (min: ${band.from.min}, max: ${band.from.max}) |\n` +
      `| planted pairs at the proposed band | P ${f(proposed.precision)}, R ${f(proposed.recall)}, F1 ${f(proposed.f1)} (${proposed.pairs} pairs) |\n` +
      `| best --min at or above it (0.01 grid) | ${best.min}: P ${f(best.precision)}, R ${f(best.recall)}, F1 ${f(best.f1)} |\n` +
      `| planted documents whose partner is among their ${nearest.k} candidates | ${f(candidateRecall)} |\n` +
      `| nearest lists vs exact TF-IDF cosine, partners at >= ${cut} (${sample.length} sample documents) | top-1 recall ${f(lists.inBand1.recall)} of ${lists.inBand1.partners}, top-3 ${f(lists.inBand3.recall)} of ${lists.inBand3.partners}; deepest projection rank of one: ${lists.inBand3.deepest} of ${o.refDepth} |\n` +
      `| the same, every document's nearest (no band) | top-1 ${f(lists.all1.recall)}, top-3 ${f(lists.all3.recall)}; deepest rank ${lists.all3.deepest} of ${o.refDepth} (reference: ${refSeconds.toFixed(0)} s) |\n\n` +
      `\`\`\`\n${bandText(band)}\n\`\`\`\n`;
    return { result, markdown };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const docsScale = defineBenchmark({
  name: 'docs-scale',
  description:
    'docs align on N generated documents with planted pairs: time, RSS, band, recall vs exact TF-IDF',
  options: (cmd) =>
    cmd
      .option('--data <dir>', 'the shared data', '../shared/data')
      .option('--n <n>', 'documents', '1000000')
      .option('--per-doc <n>', 'planted paraphrase pairs a planted document pair holds', '3')
      .option('--sample <n>', 'documents whose nearest lists are checked against exact cosine', '10000')
      .option('--ref-depth <n>', 'reference: brute-force projection candidates re-scored exactly', '1000')
      .option('--dim <n>', 'projection dimensions (docs align --dim)', '512')
      .option(
        '--plants <set>',
        'planted pairs: close (ParaSCI, MRPC) or auto (MultiPIT_Auto, lexically far)',
        'close',
      )
      .option('--dump <file>', "write each document's nearest score and whether it is planted (TSV)")
      .option('--work <dir>', "keep the alignment's work there (kill the lab and run it again: it resumes)"),
  schema,
  run: async (o) => run(o),
});

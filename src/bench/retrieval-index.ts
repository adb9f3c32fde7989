/**
 * The retrieval benchmark's corpus and index: both sides of every pair, then the distractors, built by the
 * real indexer into a temporary directory, or into a kept one where a build cut short resumes (ids follow
 * the indexer's dedup exactly); the queries are the positive pairs whose two sides are two different stored
 * sentences, and their vectors are the ones the indexer kept, so nothing is encoded twice.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LabeledPair, readSentences } from '../corpus/index.js';
import { type BuildSummary, buildIndex } from '../indexer/build.js';
import { readChunk } from '../indexer/spill.js';
import { createIndex, type FaissIndex } from '../native/index.js';
import type { SentenceStore } from '../store/index.js';
import { dedupKey, normalize } from '../text/index.js';
import type { LabelScheme } from '../text/labels.js';
import type { Log } from './harness.js';

/** Vectors per spilled chunk of the build: the benchmark reads the kept embeddings back by chunk. */
const PER_CHUNK = 8192;

export interface PairIndex {
  /** The index directory (manifest, shards, store/, work/ with the kept embeddings). */
  dir: string;
  /** The indexer's report (`resumed`, and `embedMs` summed over the runs of a resumed build). */
  summary: BuildSummary;
  /** Rows `ids` of the kept embeddings, one after another. */
  vectors(ids: readonly number[], dim: number): Promise<Float32Array>;
  /** An exact (flat) index over every kept embedding, for the exact-search figures. */
  flat(dim: number, metric: 'ip' | 'l2', n: number): Promise<FaissIndex>;
  /** Deletes the directory (a kept one too: call it once the figures are out). */
  remove(): void;
  /** After a failure: a temporary directory goes, a kept one stays for the next run to resume. */
  abandon(): void;
}

/** One query: a positive pair, the id of its s1 (searched) and of its s2 (the target). */
export interface PairQuery {
  pair: LabeledPair;
  q: number;
  t: number;
  /**
   * Every stored sentence the data call a paraphrase of s1, t among them: the other side of each positive
   * pair (of the pairs file and of the `known` pairs) that s1 is in, either way round. A set such as
   * ParaSCI pairs one sentence with many, so another of them ranked first is a paraphrase found too.
   */
  known: ReadonlySet<number>;
  /** Every stored sentence the data label not a paraphrase of s1 (negative pairs, either way round). */
  negatives: ReadonlySet<number>;
}

async function writeCorpus(file: string, pairs: readonly LabeledPair[], distractors: readonly string[]) {
  const lines = pairs.flatMap((p) => [p.s1, p.s2].map((s) => normalize(s).replace(/\n/g, ' ')));
  for (const f of distractors) {
    for await (const r of readSentences([f], { onBadRecord: 'skip' }))
      if ('text' in r) lines.push(normalize(r.text));
  }
  // Whole or not at all: a resumed build checks its input's size.
  writeFileSync(`${file}.partial`, `${lines.join('\n')}\n`);
  renameSync(`${file}.partial`, file);
  return lines.length;
}

/**
 * Builds the index over both sides of every pair plus the distractors, keeping the embeddings. With `work`
 * the build happens there and resumes what an earlier run left (the same corpus is written again: the
 * indexer refuses to resume over different inputs); without it, in a temporary directory.
 */
export async function buildPairIndex(
  pairs: readonly LabeledPair[],
  o: { distractors: readonly string[]; model: string; factory: string; work?: string | undefined },
  log: Log,
): Promise<PairIndex> {
  const root = o.work ?? mkdtempSync(join(tmpdir(), 'paramine-bench-retrieval-'));
  const remove = () => rmSync(root, { recursive: true, force: true });
  const abandon = () => {
    if (o.work === undefined) remove();
  };
  try {
    const corpus = join(root, 'corpus.txt');
    const dir = join(root, 'index');
    const resume = o.work !== undefined && existsSync(dir);
    mkdirSync(root, { recursive: true });
    const lines = await writeCorpus(corpus, pairs, o.distractors);
    log(
      `indexing ${lines} sentences (${pairs.length} pairs + distractors)${resume ? `, resuming ${dir}` : ''}`,
    );
    const summary = await buildIndex({
      inputs: [corpus],
      out: dir,
      model: o.model,
      factory: o.factory,
      minTokens: 0,
      maxTokens: 100_000,
      maxChars: 100_000,
      keepEmbeddings: true,
      checkpointEvery: PER_CHUNK,
      quiet: true,
      resume: o.work !== undefined,
    });
    return {
      dir,
      summary,
      vectors: keptVectors(join(dir, 'work')),
      flat: flatIndex(join(dir, 'work')),
      remove,
      abandon,
    };
  } catch (e) {
    abandon();
    throw e;
  }
}

function keptVectors(work: string): PairIndex['vectors'] {
  const chunks = new Map<number, Float32Array>();
  return async (ids, dim) => {
    const out = new Float32Array(ids.length * dim);
    for (const [i, id] of ids.entries()) {
      const c = Math.floor(id / PER_CHUNK);
      if (!chunks.has(c)) chunks.set(c, await readChunk(work, c, dim));
      const v = chunks.get(c) as Float32Array;
      const row = id - c * PER_CHUNK;
      out.set(v.subarray(row * dim, (row + 1) * dim), i * dim);
    }
    return out;
  };
}

function flatIndex(work: string): PairIndex['flat'] {
  return async (dim, metric, n) => {
    const flat = createIndex('Flat', dim, metric);
    for (let c = 0; c * PER_CHUNK < n; c++) {
      const v = await readChunk(work, c, dim);
      const first = c * PER_CHUNK;
      await flat.add(
        v,
        BigInt64Array.from({ length: v.length / dim }, (_, i) => BigInt(first + i)),
      );
    }
    return flat;
  };
}

/**
 * Every positive pair whose sides are two different stored sentences, with the sentences known to be
 * paraphrases of its s1 (from these pairs and the positive `known` pairs: other splits of the same data).
 */
export function positiveQueries(
  pairs: readonly LabeledPair[],
  scheme: LabelScheme,
  store: SentenceStore,
  log: Log,
  known: readonly LabeledPair[] = [],
  knownNegative: readonly LabeledPair[] = [],
): PairQuery[] {
  const idOf = (s: string) => store.idForKey(dedupKey(normalize(s)));
  const sides = (p: LabeledPair) => {
    const q = idOf(p.s1);
    const t = idOf(p.s2);
    return q !== undefined && t !== undefined && q !== t ? { q, t } : undefined;
  };
  const positive = pairs.filter((p) => scheme.isPositive(p.label) === true);
  const linked = (list: readonly LabeledPair[]) => {
    const out = new Map<number, Set<number>>();
    for (const p of list) {
      const ids = sides(p);
      if (ids === undefined) continue;
      for (const [a, b] of [
        [ids.q, ids.t],
        [ids.t, ids.q],
      ] as const)
        out.set(a, (out.get(a) ?? new Set<number>()).add(b));
    }
    return out;
  };
  const partners = linked([...positive, ...known]);
  const negative = linked([...pairs.filter((p) => scheme.isPositive(p.label) === false), ...knownNegative]);
  const queries: PairQuery[] = [];
  for (const pair of positive) {
    const ids = sides(pair);
    if (ids !== undefined)
      queries.push({
        pair,
        ...ids,
        known: partners.get(ids.q) ?? new Set([ids.t]),
        negatives: negative.get(ids.q) ?? new Set<number>(),
      });
  }
  const once = onePerSentence(queries);
  log(
    `${queries.length} positive pairs queried (${positive.length - queries.length} skipped: both sides the same sentence after normalization), ${once.length} distinct s1 with ${knownPerQuery(queries, once).toFixed(1)} known paraphrases each`,
  );
  return queries;
}

/**
 * The index of each distinct s1's first query. What depends on s1 alone (the rank of its first known
 * paraphrase, its first candidate) counts once a sentence: MultiPIT expert val's 233 positive pairs have 23
 * distinct first sides, and counted per pair each one's first candidate would weigh 4 to 27 times.
 */
export function onePerSentence(queries: readonly PairQuery[]): number[] {
  const seen = new Set<number>();
  const once: number[] = [];
  for (const [i, x] of queries.entries()) {
    if (seen.has(x.q)) continue;
    seen.add(x.q);
    once.push(i);
  }
  return once;
}

/** Known paraphrases per distinct s1 (`once`: onePerSentence's), on average (1 where each s1 has only its own s2). */
export function knownPerQuery(queries: readonly PairQuery[], once: readonly number[]): number {
  return once.reduce((s, i) => s + (queries[i] as PairQuery).known.size, 0) / Math.max(1, once.length);
}

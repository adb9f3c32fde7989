/**
 * Retrieval benchmark (Kanerva et al., Fig. 8/11): index both sides of every pair plus distractors with
 * the real indexer, query s1 of every positive pair and find the rank of s2 (s1 itself excluded):
 * top-N, not found, MRR, overall and per label; the same through exact search; and top-1/10 after the
 * cross-encoder reranks the first K candidates (through the shared search core).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPairs, readSentences } from '../corpus/index.js';
import { Encoder } from '../encode/index.js';
import { ShardedIndex } from '../index/index.js';
import { buildIndex } from '../indexer/build.js';
import { readChunk } from '../indexer/spill.js';
import { resolveModelDir } from '../models/resolve.js';
import { createIndex } from '../native/index.js';
import { CrossEncoder } from '../rerank/index.js';
import { SearchCore } from '../search/core.js';
import { searchOptionsSchema } from '../search/types.js';
import { SentenceStore } from '../store/index.js';
import { dedupKey, normalize } from '../text/index.js';
import { detectScheme } from '../text/labels.js';
import { type RankedQuery, type RetrievalResult, rankOf, retrievalMetrics } from './metrics.js';

export interface RetrievalOptions {
  pairs: string;
  distractors: string[];
  model: string;
  reranker?: string | undefined;
  rerankDepth: number;
  depths: number[];
  exact: boolean;
  factory: string;
  nprobe?: number | undefined;
  positive?: string[] | undefined;
  log?: (line: string) => void;
}

type Stats = Omit<RetrievalResult, 'kind' | 'labels'>;
const overall = (r: RetrievalResult): Pick<Stats, 'top' | 'not_found' | 'mrr'> => ({
  top: r.top,
  not_found: r.not_found,
  mrr: r.mrr,
});
const byLabel = (r: RetrievalResult) =>
  Object.fromEntries(
    Object.entries(r.labels).map(([k, v]) => [k, { n: v.n, top: v.top, not_found: v.not_found, mrr: v.mrr }]),
  );

export async function retrievalBenchmark(o: RetrievalOptions) {
  const log = o.log ?? (() => {});
  const pairs = await readPairs(o.pairs);
  const scheme = detectScheme(
    pairs.map((p) => p.label),
    o.positive ? { positive: o.positive } : {},
  );
  // Corpus: both sides of every pair, then the distractors; ids follow the indexer's dedup exactly.
  const dir = mkdtempSync(join(tmpdir(), 'paramine-bench-retrieval-'));
  const perChunk = 8192;
  try {
    const corpus = join(dir, 'corpus.txt');
    const lines = pairs.flatMap((p) => [p.s1, p.s2].map((s) => normalize(s).replace(/\n/g, ' ')));
    for (const f of o.distractors) {
      for await (const r of readSentences([f], { onBadRecord: 'skip' }))
        if ('text' in r) lines.push(normalize(r.text));
    }
    writeFileSync(corpus, `${lines.join('\n')}\n`);
    const out = join(dir, 'index');
    log(`indexing ${lines.length} sentences (${pairs.length} pairs + distractors)`);
    await buildIndex({
      inputs: [corpus],
      out,
      model: o.model,
      factory: o.factory,
      minTokens: 0,
      maxTokens: 100_000,
      maxChars: 100_000,
      keepEmbeddings: true,
      checkpointEvery: perChunk,
      quiet: true,
    });
    const store = SentenceStore.open(join(out, 'store'), { readOnly: true });
    const index = await ShardedIndex.open(out);
    const dim = index.dim;
    const n = store.count;
    const idOf = (s: string) => store.idForKey(dedupKey(normalize(s)));

    // Every positive pair whose sides are two different stored sentences.
    const queries = pairs
      .map((p) => ({ p, q: idOf(p.s1), t: idOf(p.s2) }))
      .filter(
        (x) => scheme.isPositive(x.p.label) === true && x.q !== undefined && x.t !== undefined && x.q !== x.t,
      );
    const skipped = pairs.filter((p) => scheme.isPositive(p.label) === true).length - queries.length;
    log(
      `${queries.length} positive pairs queried (${skipped} skipped: both sides the same sentence after normalization)`,
    );

    // Query vectors are the stored embeddings of s1: no second encoding pass.
    const work = join(out, 'work');
    const chunks = new Map<number, Float32Array>();
    const vectorOf = async (id: number) => {
      const c = Math.floor(id / perChunk);
      if (!chunks.has(c)) chunks.set(c, await readChunk(work, c, dim));
      const v = chunks.get(c) as Float32Array;
      return v.subarray((id - c * perChunk) * dim, (id - c * perChunk + 1) * dim);
    };
    const qv = new Float32Array(queries.length * dim);
    for (const [i, x] of queries.entries()) qv.set(await vectorOf(x.q as number), i * dim);

    const deepest = Math.max(...o.depths);
    const k = Math.min(deepest + 1, n);
    const rank = async (ix: Pick<ShardedIndex, 'search'>, opts: { nprobe?: number }) => {
      const res: RankedQuery[] = [];
      const B = 256;
      for (let s = 0; s < queries.length; s += B) {
        const part = qv.subarray(s * dim, Math.min(queries.length, s + B) * dim);
        const { ids, distances } = await ix.search(part, k, opts);
        for (let j = 0; j < part.length / dim; j++) {
          const x = queries[s + j] as (typeof queries)[number];
          const row = [...ids.subarray(j * k, (j + 1) * k)].map(Number);
          const scores = [...distances.subarray(j * k, (j + 1) * k)];
          const r = rankOf(x.t as number, row, x.q as number, scores);
          res.push({
            rank: r !== undefined && r <= deepest ? r : undefined,
            group: scheme.retrievalGroup(x.p.label),
          });
        }
      }
      return retrievalMetrics(res, o.depths);
    };
    const t0 = performance.now();
    const ann = await rank(index, o.nprobe === undefined ? {} : { nprobe: o.nprobe });
    const annS = (performance.now() - t0) / 1000;

    let exact: RetrievalResult | undefined;
    if (o.exact) {
      const flat = createIndex('Flat', dim, index.metric);
      for (let c = 0; c * perChunk < n; c++) {
        const v = await readChunk(work, c, dim);
        await flat.add(
          v,
          BigInt64Array.from({ length: v.length / dim }, (_, i) => BigInt(c * perChunk + i)),
        );
      }
      exact = await rank(flat, {});
      await flat.close();
    }

    let reranked: RetrievalResult | undefined;
    if (o.reranker) {
      const encoder = await Encoder.open(resolveModelDir(o.model));
      const cross = await CrossEncoder.open(resolveModelDir(o.reranker, 'reranker'));
      const core = new SearchCore({ encoder, index, store, reranker: cross });
      const opts = searchOptionsSchema.parse({
        k: o.rerankDepth,
        candidates: o.rerankDepth,
        excludeDuplicates: false,
        ...(o.nprobe === undefined ? {} : { nprobe: o.nprobe }),
      });
      const res: RankedQuery[] = [];
      // Queries in groups: one cross-encoder call scores every group's (query, candidate) pairs.
      const G = 32;
      for (let s = 0; s < queries.length; s += G) {
        const group = queries.slice(s, s + G);
        const { results } = await core.searchVectors(
          group.map((x) => normalize(x.p.s1)),
          qv.slice(s * dim, (s + group.length) * dim),
          opts,
          { excludeIds: group.map((x) => x.q) },
        );
        group.forEach((x, j) => {
          const ids = (results[j]?.candidates ?? []).map((c) => c.id);
          res.push({
            rank: rankOf(x.t as number, ids, x.q as number),
            group: scheme.retrievalGroup(x.p.label),
          });
        });
      }
      reranked = retrievalMetrics(
        res,
        [1, 10].filter((d) => d <= o.rerankDepth),
      );
      await Promise.all([encoder.close(), cross.close()]);
    }
    const manifest = index.manifest;
    await Promise.all([index.close(), store.close()]);
    return {
      result: {
        kind: 'retrieval' as const,
        pairs: queries.length,
        corpus_size: n,
        model: manifest.model.id,
        scheme: scheme.name,
        index: { factory: manifest.factory, nprobe: o.nprobe ?? manifest.search.nprobe },
        depths: o.depths,
        overall: overall(ann),
        ...(exact ? { exact: overall(exact) } : {}),
        ...(reranked ? { reranked: { depth: o.rerankDepth, top: reranked.top, mrr: reranked.mrr } } : {}),
        by_label: byLabel(ann),
        ...(exact ? { exact_by_label: byLabel(exact) } : {}),
        timings: { ann_search_s: annS },
      },
      ann,
      exact,
      reranked,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The one search + rerank core. Server routes, mining jobs and the benchmark are thin front ends
 * over it: encode the queries -> ANN search over the shards -> fetch texts -> lexical measures and
 * filters -> cross-encoder rerank -> label filters -> top k.
 */
import { ParamineError } from '../errors.js';
import type { PairScore } from '../rerank/index.js';
import type { Meta, SentenceStore } from '../store/index.js';
import { dedupKey, normalize } from '../text/index.js';
import { lexicalMeasures, passesLexical } from './lexical.js';
import { positiveProbability } from './rank.js';
import type { Candidate, QueryResult, SearchOptions, SearchResponse } from './types.js';

export interface AnnIndex {
  readonly dim: number;
  readonly metric: 'ip' | 'l2';
  search(
    queries: Float32Array,
    k: number,
    options?: { nprobe?: number },
  ): Promise<{ distances: Float32Array; ids: BigInt64Array }>;
}

/** Cosine of unit vectors from a FAISS distance: the inner product itself, or 1 - L2² / 2. */
export function cosineOf(metric: AnnIndex['metric'], distance: number): number {
  return metric === 'ip' ? distance : 1 - distance / 2;
}

export interface QueryEncoder {
  readonly dim: number;
  encode(texts: string[]): Promise<Float32Array>;
}

export interface PairScorer {
  readonly labels: readonly string[];
  score(pairs: ReadonlyArray<readonly [string, string]>): Promise<PairScore[]>;
}

export interface CoreParts {
  encoder: QueryEncoder;
  index: AnnIndex;
  store: SentenceStore;
  reranker?: PairScorer | undefined;
  /** Observability hooks. */
  onStage?: (stage: 'encode' | 'search' | 'rerank', ms: number) => void;
}

/** Per-query extras a job passes: its own id, excluded like the query's duplicates. */
export interface QueryContext {
  excludeIds?: ReadonlyArray<number | undefined>;
  /**
   * Drops a candidate before lexical measures and reranking (a job's pairs already found, or pairs
   * sharing a group key), so no cross-encoder time is spent on it.
   */
  keep?: (query: number, candidate: { id: number; meta?: Meta }) => boolean;
  /**
   * Examine exactly the `candidates` nearest neighbours (the query and its duplicates aside) and filter
   * them, as paraphrase_mining's top_k does, instead of reaching deeper to refill what filters drop.
   */
  fixedDepth?: boolean;
}

export class SearchCore {
  readonly parts: CoreParts;

  constructor(parts: CoreParts) {
    if (parts.encoder.dim !== parts.index.dim) {
      throw new ParamineError(
        'DIM_MISMATCH',
        `the encoder gives ${parts.encoder.dim}-d vectors but the index holds ${parts.index.dim}-d vectors`,
      );
    }
    this.parts = parts;
  }

  get canRerank(): boolean {
    return this.parts.reranker !== undefined;
  }

  async search(texts: readonly string[], options: SearchOptions): Promise<SearchResponse> {
    const started = performance.now();
    const queries = texts.map((t) => normalize(t));
    const t0 = performance.now();
    const vectors = await this.parts.encoder.encode(queries);
    const encodeMs = performance.now() - t0;
    this.parts.onStage?.('encode', encodeMs);
    const { results, searchMs, rerankMs } = await this.searchVectors(queries, vectors, options);
    return { results, timings: { encodeMs, searchMs, rerankMs, totalMs: performance.now() - started } };
  }

  /** Search with query vectors already at hand (jobs re-use the stored sentences' embeddings). */
  async searchVectors(
    queries: readonly string[],
    vectors: Float32Array,
    options: SearchOptions,
    context: QueryContext = {},
  ): Promise<{ results: QueryResult[]; searchMs: number; rerankMs: number }> {
    const reranker = options.rerank ? this.parts.reranker : undefined;
    if (options.rerank && options.labels !== undefined && reranker === undefined) {
      throw new ParamineError(
        'BAD_INPUT',
        'label filters need a reranker; start the service with --reranker',
        {
          field: 'labels',
        },
      );
    }
    const depth = Math.max(options.k, options.candidates ?? (reranker ? Math.max(20, options.k) : options.k));
    // One extra neighbour per excluded id or duplicate: the query itself is usually the first hit.
    const fetch = depth + (options.excludeDuplicates || context.excludeIds ? 1 : 0);
    const t0 = performance.now();
    const { distances, ids } = await this.parts.index.search(vectors, fetch, nprobeOf(options));
    const searchMs = performance.now() - t0;
    this.parts.onStage?.('search', searchMs);

    const all: Array<Array<Omit<Candidate, 'lexical'> & { key?: string }>> = [];
    const wanted = new Set<number>();
    for (let q = 0; q < queries.length; q++) {
      const row: Array<Omit<Candidate, 'lexical'>> = [];
      for (let j = 0; j < fetch; j++) {
        const id = Number(ids[q * fetch + j]);
        if (id < 0) break;
        const d = distances[q * fetch + j] as number;
        row.push({
          id,
          text: '',
          cosine: cosineOf(this.parts.index.metric, d),
          annRank: row.length + 1,
        });
        wanted.add(id);
      }
      all.push(row);
    }
    const wantedIds = [...wanted];
    const records = await this.parts.store.getMany(wantedIds);
    const byId = new Map<number, { text: string; meta?: Meta }>();
    wantedIds.forEach((id, i) => {
      const r = records[i];
      if (r) byId.set(id, r);
    });

    const kept: Candidate[][] = all.map((row, q) => {
      const query = queries[q] as string;
      // An empty key (punctuation only) says nothing about duplicates.
      const qKey = options.excludeDuplicates ? dedupKey(query) || undefined : undefined;
      const exclude = context.excludeIds?.[q];
      const out: Candidate[] = [];
      let examined = 0;
      for (const c of row) {
        const rec = byId.get(c.id);
        if (rec === undefined || c.id === exclude) continue;
        if (qKey !== undefined && dedupKey(rec.text) === qKey) continue;
        if (context.fixedDepth && examined++ === depth) break;
        if (
          context.keep &&
          !context.keep(q, rec.meta === undefined ? { id: c.id } : { id: c.id, meta: rec.meta })
        )
          continue;
        if (options.minCosine !== undefined && c.cosine < options.minCosine) continue;
        const lexical = lexicalMeasures(query, rec.text);
        if (!passesLexical(query, rec.text, options.filter, lexical)) continue;
        out.push({ ...c, text: rec.text, lexical, ...(rec.meta === undefined ? {} : { meta: rec.meta }) });
        if (out.length === depth) break;
      }
      // ANN ranks count only the candidates a user can see.
      out.forEach((c, i) => {
        c.annRank = i + 1;
      });
      return out;
    });

    let rerankMs = 0;
    if (reranker) {
      const t1 = performance.now();
      const pairs = kept.flatMap((row, q) => row.map((c) => [queries[q] as string, c.text] as const));
      const scores = await reranker.score(pairs);
      rerankMs = performance.now() - t1;
      this.parts.onStage?.('rerank', rerankMs);
      let s = 0;
      for (const row of kept) {
        for (const c of row) {
          const score = scores[s++] as PairScore;
          c.label = score.label;
          c.probabilities = score.probabilities;
        }
        const p = (c: Candidate) => positiveProbability(c.probabilities ?? {}, reranker.labels);
        // Stable sort: equal probabilities keep their ANN order.
        row.sort((a, b) => p(b) - p(a));
        row.forEach((c, i) => {
          c.rerankRank = i + 1;
        });
      }
    }

    const results = kept.map((row, q) => ({
      query: queries[q] as string,
      candidates: row
        .filter(
          (c) => options.labels === undefined || (c.label !== undefined && options.labels.includes(c.label)),
        )
        .filter((c) => {
          if (options.minProbability === undefined || c.label === undefined || c.probabilities === undefined)
            return true;
          return (c.probabilities[c.label] ?? 0) >= options.minProbability;
        })
        .slice(0, options.k),
    }));
    return { results, searchMs, rerankMs };
  }

  async classify(pairs: ReadonlyArray<readonly [string, string]>): Promise<PairScore[]> {
    if (!this.parts.reranker) {
      throw new ParamineError(
        'UNAVAILABLE',
        'no cross-encoder loaded; start the service with --reranker DIR',
      );
    }
    return this.parts.reranker.score(pairs.map(([a, b]) => [normalize(a), normalize(b)] as const));
  }
}

function nprobeOf(options: SearchOptions): { nprobe?: number } {
  return options.nprobe === undefined ? {} : { nprobe: options.nprobe };
}

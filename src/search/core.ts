/**
 * The one search + rerank core. Server routes, mining jobs and the benchmark are thin front ends
 * over it: encode the queries -> ANN search over the shards -> fetch texts -> lexical measures and
 * filters -> cross-encoder rerank -> label filters -> top k. Its models come in through the ports
 * (`Embedder`, `PairScorer`); callers see what they need of them (labels, dim, metric), not the parts.
 */
import { type DomainRequest, type Domains, planDomain } from '../domain/index.js';
import type { IdfWeights } from '../encode/index.js';
import { ParamineError } from '../errors.js';
import { gatherRows } from '../index/index.js';
import type { Embedder, LabelMode, PairScore, PairScorer } from '../models/ports.js';
import type { SentenceStore } from '../store/index.js';
import { normalize, pairDiff } from '../text/index.js';
import { bertScoreFilter, type TokenEncoder } from './bertscore.js';
import {
  type Hit,
  hitRows,
  keptCandidates,
  type Metric,
  type QueryContext,
  recordsOf,
} from './candidates.js';
import { attachDomain, orderByDomain, type QueryDomain, queryDomain, withDomainKeep } from './domain.js';
import { filterNeedsProbabilities } from './lexical.js';
import { finalCandidates, rerankRows } from './rank.js';
import {
  type Candidate,
  keptLabels,
  labelMode,
  type QueryResult,
  type SearchOptions,
  type SearchResponse,
} from './types.js';

export { cosineOf, type QueryContext } from './candidates.js';

export interface AnnIndex {
  readonly dim: number;
  readonly metric: Metric;
  search(
    queries: Float32Array,
    k: number,
    options?: AnnOptions,
  ): Promise<{ distances: Float32Array; ids: BigInt64Array }>;
}

/** What a search asks of the index: lists visited, or a recall to meet (an operating point). */
export interface AnnOptions {
  nprobe?: number;
  recall?: number;
}

export type Stage = 'encode' | 'search' | 'rerank';

export interface CoreParts {
  encoder: Embedder;
  index: AnnIndex;
  store: SentenceStore;
  reranker?: PairScorer | undefined;
  /** The index's domains (requests with `domain`). */
  domains?: Domains | undefined;
  /** Contextual token vectors for the BERTScore filter (the encoder itself, unbatched). */
  tokens?: TokenEncoder | undefined;
  /** idf weights over the index's sentences, computed on first use (filter.bertScoreIdf). */
  idf?: (() => Promise<IdfWeights>) | undefined;
  /** Observability hook. */
  onStage?: (stage: Stage, ms: number) => void;
}

const NO_RERANKER = 'no cross-encoder loaded; start the service with --reranker DIR';

/** Candidates examined per query: `candidates`, else k (at least 20 when reranking). */
function depthOf(options: SearchOptions, reranking: boolean): number {
  return Math.max(options.k, options.candidates ?? (reranking ? Math.max(20, options.k) : options.k));
}

export class SearchCore {
  readonly #parts: CoreParts;

  constructor(parts: CoreParts) {
    if (parts.encoder.dim !== parts.index.dim) {
      throw new ParamineError(
        'DIM_MISMATCH',
        `the encoder gives ${parts.encoder.dim}-d vectors but the index holds ${parts.index.dim}-d vectors`,
      );
    }
    this.#parts = parts;
  }

  get canRerank(): boolean {
    return this.#parts.reranker !== undefined;
  }

  /** The cross-encoder's labels in class-id order; [] without one. */
  get labels(): readonly string[] {
    return this.#parts.reranker?.labels ?? [];
  }

  /** The labels candidates are ranked by (their summed probability); [] without a cross-encoder. */
  get positiveLabels(): readonly string[] {
    return this.#parts.reranker?.positiveLabels ?? [];
  }

  get dim(): number {
    return this.#parts.index.dim;
  }

  /** Throws what a request with this `domain` would (unknown name, stale build, mode needing rerank). */
  async checkDomain(req: DomainRequest, rerank: boolean): Promise<void> {
    await planDomain(this.#parts.domains, req, rerank && this.canRerank);
  }

  get metric(): Metric {
    return this.#parts.index.metric;
  }

  /**
   * Throws OVERLOADED when even the smallest request would be refused now (one text for the encoder, one
   * pair for the cross-encoder): the routes ask before reading a body, so a refusal costs no parsing.
   */
  admitSmallest(model: 'encoder' | 'reranker'): void {
    if (model === 'encoder') this.#parts.encoder.admit?.(1);
    else this.#parts.reranker?.admit?.(1);
  }

  async search(
    texts: readonly string[],
    options: SearchOptions,
    signal?: AbortSignal,
  ): Promise<SearchResponse> {
    const started = performance.now();
    const queries = texts.map((t) => normalize(t));
    // Refuse at once when a model's queue is full, before any model time is spent on the request; the
    // rerank's place is held from here (the encoder's submit follows its admission in the same tick).
    this.#parts.encoder.admit?.(queries.length);
    const reranker = options.rerank ? this.#parts.reranker : undefined;
    const reservation = reranker?.reserve?.(queries.length * depthOf(options, true));
    try {
      const vectors = await this.#timed('encode', () => this.#parts.encoder.encode(queries, signal));
      const { results, searchMs, rerankMs } = await this.searchVectors(
        queries,
        vectors.value,
        options,
        { reservation },
        signal,
      );
      return {
        results,
        ...(reranker ? { order: reranker.rerankOrder ?? 'probability' } : {}),
        timings: { encodeMs: vectors.ms, searchMs, rerankMs, totalMs: performance.now() - started },
      };
    } finally {
      reservation?.release();
    }
  }

  /** Search with query vectors already at hand (jobs re-use the stored sentences' embeddings). */
  async searchVectors(
    queries: readonly string[],
    vectors: Float32Array,
    options: SearchOptions,
    context: QueryContext = {},
    signal?: AbortSignal,
  ): Promise<{ results: QueryResult[]; searchMs: number; rerankMs: number }> {
    const reranker = options.rerank ? this.#parts.reranker : undefined;
    if (reranker === undefined && filterNeedsProbabilities(options.filter)) {
      throw new ParamineError('BAD_INPUT', 'probability filters need the cross-encoder: turn rerank on', {
        field: 'filter',
      });
    }
    if (options.rerank && keptLabels(options) !== undefined && reranker === undefined) {
      throw new ParamineError(
        'BAD_INPUT',
        'label filters need a reranker; start the service with --reranker',
        {
          field: 'labels',
        },
      );
    }
    const depth = depthOf(options, reranker !== undefined);
    // One extra neighbour per excluded id or duplicate: the query itself is usually the first hit.
    const fetch = depth + (options.excludeDuplicates || context.excludeIds ? 1 : 0);
    const nprobe: AnnOptions = {
      ...(options.nprobe === undefined ? {} : { nprobe: options.nprobe }),
      ...(options.recall === undefined ? {} : { recall: options.recall }),
    };
    const qd = options.domain
      ? await queryDomain(
          this.#parts.domains,
          options.domain,
          reranker !== undefined,
          queries,
          context.excludeIds ?? [],
          vectors,
        )
      : undefined;
    const ctx = qd ? withDomainKeep(context, qd) : context;
    const ann = await this.#neighbours(vectors, queries.length, fetch, nprobe, context.hits, qd);
    const rows = ann.rows;
    const byId = await recordsOf(this.#parts.store, rows);
    const kept = rows.map((row, q) =>
      keptCandidates(q, queries[q] as string, row, byId, depth, options, ctx),
    );
    if (qd) attachDomain(kept, qd);
    if (options.filter.bertScoreMin !== undefined) await this.#bertScore(kept, queries, options);
    const rerankMs = reranker
      ? (
          await this.#timed('rerank', () =>
            rerankRows(reranker, queries, kept, signal, {
              mode: labelMode(options),
              reservation: context.reservation,
            }),
          )
        ).ms
      : 0;
    if (qd) orderByDomain(kept, qd, reranker?.positiveLabels ?? []);
    const results = kept.map((row, q) => ({
      query: queries[q] as string,
      candidates: finalCandidates(queries[q] as string, row, options).map((c) =>
        options.diff ? { ...c, diff: pairDiff(queries[q] as string, c.text) } : c,
      ),
      ...(qd ? { domain: qd.queries[q] } : {}),
    }));
    return { results, searchMs: ann.ms, rerankMs };
  }

  async classify(
    pairs: ReadonlyArray<readonly [string, string]>,
    signal?: AbortSignal,
    mode?: LabelMode | undefined,
  ): Promise<PairScore[]> {
    if (!this.#parts.reranker) throw new ParamineError('UNAVAILABLE', NO_RERANKER);
    return this.#parts.reranker.score(
      pairs.map(([a, b]) => [normalize(a), normalize(b)] as const),
      signal,
      { mode },
    );
  }

  async #bertScore(rows: Candidate[][], queries: readonly string[], options: SearchOptions): Promise<void> {
    const { tokens, idf } = this.#parts;
    if (tokens === undefined) {
      throw new ParamineError('UNAVAILABLE', "the BERTScore filter needs the encoder's token vectors", {
        field: 'filter.bertScoreMin',
      });
    }
    const weights = options.filter.bertScoreIdf && idf ? await idf() : undefined;
    await bertScoreFilter(rows, queries, tokens, options.filter.bertScoreMin as number, weights);
  }

  /**
   * ANN rows per query. A scoped job brings its own (context.hits); queries that domain subsampling drops
   * are not searched at all and get no row.
   */
  async #neighbours(
    vectors: Float32Array,
    n: number,
    fetch: number,
    nprobe: AnnOptions,
    hits: ReadonlyArray<readonly Hit[]> | undefined,
    qd: QueryDomain | undefined,
  ): Promise<{ rows: ReadonlyArray<readonly Hit[]>; ms: number }> {
    const live = qd?.queries.flatMap((s, q) => (s.kept ? [q] : []));
    if (hits) return { rows: qd ? hits.map((r, q) => (qd.queries[q]?.kept ? r : [])) : hits, ms: 0 };
    const dim = this.#parts.index.dim;
    const searched = live && live.length < n ? gatherRows(vectors, live, dim) : vectors;
    const ann = await this.#timed('search', () =>
      searched.length === 0
        ? Promise.resolve({ distances: new Float32Array(0), ids: new BigInt64Array(0) })
        : this.#parts.index.search(searched, fetch, nprobe),
    );
    const found = hitRows(ann.value, searched.length / dim, fetch, this.#parts.index.metric);
    return { rows: searched === vectors ? found : spreadRows(found, live ?? [], n), ms: ann.ms };
  }

  async #timed<T>(stage: Stage, run: () => Promise<T>): Promise<{ value: T; ms: number }> {
    const t0 = performance.now();
    const value = await run();
    const ms = performance.now() - t0;
    this.#parts.onStage?.(stage, ms);
    return { value, ms };
  }
}

/** Hit rows of the searched queries back at their positions; the others get none. */
function spreadRows<T>(found: T[][], live: readonly number[], n: number): T[][] {
  const rows: T[][] = Array.from({ length: n }, () => []);
  live.forEach((q, k) => {
    rows[q] = found[k] ?? [];
  });
  return rows;
}

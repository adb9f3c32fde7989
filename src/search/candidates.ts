/**
 * The retrieval half of the search core: ANN hits -> rows of candidates -> texts from the store ->
 * exclusions (the query, its duplicates, what the caller's `keep` drops) and the cosine and lexical filters.
 */
import type { Reservation } from '../models/ports.js';
import type { Meta, SentenceStore } from '../store/index.js';
import { dedupKey } from '../text/index.js';
import { lexicalMeasures, passesLexical } from './lexical.js';
import type { Candidate, SearchOptions } from './types.js';

export type Metric = 'ip' | 'l2';

/** Cosine of unit vectors from a FAISS distance: the inner product itself, or 1 - L2² / 2. */
export function cosineOf(metric: Metric, distance: number): number {
  return metric === 'ip' ? distance : 1 - distance / 2;
}

/** An ANN hit before its text is known. */
export type Hit = Omit<Candidate, 'lexical' | 'text'>;

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
  /**
   * Each query's neighbours, best first, when the caller searched them itself (a job's group scope):
   * the core skips its ANN search and takes these instead.
   */
  hits?: ReadonlyArray<readonly Hit[]>;
  /** The rerank's place, held since the request was admitted (SearchCore.search). */
  reservation?: Reservation | undefined;
}

/** Rows of hits, one per query, from FAISS's flat (nq × fetch) result; empty slots (id -1) end a row. */
export function hitRows(
  result: { distances: Float32Array; ids: BigInt64Array },
  nq: number,
  fetch: number,
  metric: Metric,
): Hit[][] {
  const rows: Hit[][] = [];
  for (let q = 0; q < nq; q++) {
    const row: Hit[] = [];
    for (let j = 0; j < fetch; j++) {
      const id = Number(result.ids[q * fetch + j]);
      if (id < 0) break;
      row.push({ id, cosine: cosineOf(metric, result.distances[q * fetch + j] as number), annRank: j + 1 });
    }
    rows.push(row);
  }
  return rows;
}

/** Texts and metadata of every hit, fetched once per distinct id. */
export async function recordsOf(
  store: SentenceStore,
  rows: ReadonlyArray<readonly Hit[]>,
): Promise<Map<number, { text: string; meta?: Meta }>> {
  const ids = [...new Set(rows.flatMap((row) => row.map((h) => h.id)))];
  const records = await store.getMany(ids);
  const byId = new Map<number, { text: string; meta?: Meta }>();
  ids.forEach((id, i) => {
    const r = records[i];
    if (r) byId.set(id, r);
  });
  return byId;
}

/**
 * One query's candidates: at most `depth` hits that survive the exclusions and filters, in ANN order,
 * with ANN ranks counting only the candidates a user can see.
 */
export function keptCandidates(
  q: number,
  query: string,
  row: readonly Hit[],
  byId: ReadonlyMap<number, { text: string; meta?: Meta }>,
  depth: number,
  options: SearchOptions,
  context: QueryContext,
): Candidate[] {
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
    const meta = rec.meta === undefined ? {} : { meta: rec.meta };
    if (context.keep && !context.keep(q, { id: c.id, ...meta })) continue;
    if (options.minCosine !== undefined && c.cosine < options.minCosine) continue;
    const lexical = lexicalMeasures(query, rec.text);
    if (!passesLexical(query, rec.text, options.filter, lexical)) continue;
    out.push({ ...c, annRank: out.length + 1, text: rec.text, lexical, ...meta });
    if (out.length === depth) break;
  }
  return out;
}

/**
 * Mining what is new (`since`): a full re-mine pairs every query with its top k; the pairs of it that
 * involve a sentence added since the point given are (1) each new sentence with its own top k, and
 * (2) each older sentence with the new ones in its top k. (1) queries the new sentences. For (2) the
 * older sentences that could hold a new one are found from the other side and queried as in a full mine,
 * keeping only their new candidates: every pair must reach the job's minCosine, so an older sentence
 * matters only when it sits within minCosine of a new one, and each new sentence's neighbourhood is read
 * until it drops below minCosine (deepening from `reverseDepth` up to MAX_REVERSE_SEARCH). That is exact up
 * to the index's own recall (the full mine searches the same index). Without a minCosine (or past the
 * cap) the first `reverseDepth` neighbours are taken: an older sentence that holds a new one in its top k
 * while sitting beyond that new one's reverseDepth nearest (a hub) is then missed. The job costs the new
 * sentences' searches and their neighbourhoods', not the corpus's.
 */
import type { AnnIndex } from '../search/core.js';
import { annOptionsOf } from './pairs.js';
import { indexBatch, type QuerySource, type SourceParts, vectorsForIds } from './queries.js';
import { defaultReverseDepth, effectiveScope, type JobSpec } from './spec.js';

/** New sentences searched at once for their neighbourhoods. */
const CHUNK = 512;
/** The deepest a new sentence's neighbourhood is read (with the overfetch for tombstones, within the native search limit). */
export const MAX_REVERSE_SEARCH = 2048;

export interface SinceSource extends QuerySource {
  /** The first new id: queries below it keep only new candidates. */
  readonly first: number;
  /** The query sentences, older ones first (what the job store keeps for a resumed run). */
  readonly ids: readonly number[];
}

/** A `since` job's queries as fixed when it was created. */
export function storedSinceSource(
  parts: SourceParts,
  stored: { first: number; ids: readonly number[] },
): SinceSource {
  const { first, ids } = stored;
  return {
    first,
    ids,
    total: ids.length,
    batch: (start, count) => indexBatch(parts, ids.slice(start, start + count)),
  };
}

export async function openSinceSource(
  spec: JobSpec,
  since: NonNullable<JobSpec['since']>,
  parts: SourceParts,
  ann: AnnIndex,
): Promise<SinceSource> {
  const end = parts.ntotal;
  const added = parts.added;
  const first = Math.min(end, added === undefined ? end : Math.max(added.base, added.firstSince(since)));
  const fresh = Array.from({ length: end - first }, (_, i) => first + i).filter(
    (id) => !parts.store.isDeleted(id),
  );
  // Scores are cosines on an inner-product index only.
  const minCosine = ann.metric === 'ip' ? effectiveScope(spec).minCosine : undefined;
  const older = new Set<number>();
  for (let at = 0; at < fresh.length; at += CHUNK) {
    let ids = fresh.slice(at, at + CHUNK);
    let vectors = await vectorsForIds(parts, ids);
    let depth = Math.min(spec.reverseDepth ?? defaultReverseDepth(spec.k), end);
    for (;;) {
      const found = await ann.search(vectors, depth, annOptionsOf(spec));
      const deeper: number[] = [];
      ids.forEach((_, q) => {
        for (let j = q * depth; j < (q + 1) * depth; j++) {
          const id = Number(found.ids[j]);
          if (
            id >= 0 &&
            id < first &&
            (minCosine === undefined || (found.distances[j] as number) >= minCosine)
          )
            older.add(id);
        }
        // Its neighbourhood goes on above minCosine past what was read: read it deeper.
        const last = found.distances[(q + 1) * depth - 1] as number;
        if (minCosine !== undefined && Number(found.ids[(q + 1) * depth - 1]) >= 0 && last >= minCosine)
          deeper.push(q);
      });
      const next = Math.min(depth * 4, MAX_REVERSE_SEARCH, end);
      if (deeper.length === 0 || next <= depth) break;
      const dim = vectors.length / ids.length;
      vectors = Float32Array.from(deeper.flatMap((q) => [...vectors.subarray(q * dim, (q + 1) * dim)]));
      ids = deeper.map((q) => ids[q] as number);
      depth = next;
    }
  }
  return storedSinceSource(parts, { first, ids: [...[...older].sort((a, b) => a - b), ...fresh] });
}

/**
 * Near copies in a document alignment: documents scoring at or above the band's max with each other (the
 * same article syndicated, or reformatted) collapse into one group before partners are chosen, so a
 * document with many copies still finds its real partners among its k nearest (the copies no longer
 * crowd them out). The group's first document stands for it; the alignment says which were its copies.
 */
import { gatherRows } from '../index/index.js';
import { createIndex, type SearchResult } from '../native/index.js';
import { UnionFind } from './cluster.js';

/** A neighbour of document i: document j at this score. */
export interface Neighbour {
  i: number;
  j: number;
  score: number;
}

/** A near-copy group: the document that stands for it and the copies it stands for. */
export interface CopyGroup {
  doc: string;
  copies: string[];
}

/** Each row's neighbours in order (itself left out), as document numbers: row r and hit h are docs[r], docs[h]. */
export function neighboursOf(found: SearchResult, k: number, docs: readonly number[]): Neighbour[][] {
  return docs.map((i, r) => {
    const row: Neighbour[] = [];
    for (let h = 0; h < k; h++) {
      const hit = Number(found.ids[r * k + h]);
      if (hit < 0 || docs[hit] === i) continue;
      row.push({ i, j: docs[hit] as number, score: found.distances[r * k + h] as number });
    }
    return row;
  });
}

/** Each document's representative: the lowest-numbered document of its near-copy group (itself when none). */
export function copyRepresentatives(neighbours: Neighbour[][], max: number): number[] {
  const uf = new UnionFind();
  for (const row of neighbours) for (const n of row) if (n.score >= max) uf.union(n.i, n.j);
  const lowest = new Map<number, number>();
  neighbours.forEach((_, i) => {
    const root = uf.find(i);
    lowest.set(root, Math.min(lowest.get(root) ?? i, i));
  });
  return neighbours.map((_, i) => lowest.get(uf.find(i)) as number);
}

/** The groups of more than one document, by their documents' ids. */
export function copyGroups(representative: readonly number[], idOf: (i: number) => string): CopyGroup[] {
  const members = new Map<number, string[]>();
  representative.forEach((r, i) => {
    if (r !== i) members.set(r, [...(members.get(r) ?? []), idOf(i)]);
  });
  return [...members].map(([r, copies]) => ({ doc: idOf(r), copies }));
}

/** The representatives' neighbours among themselves (vectors: every document's, n x dim). */
export async function representativeNeighbours(
  vectors: Float32Array,
  dim: number,
  reps: readonly number[],
  k: number,
): Promise<Neighbour[][]> {
  const m = gatherRows(vectors, reps, dim);
  const index = createIndex('Flat', dim, 'ip');
  try {
    await index.add(
      m,
      BigInt64Array.from(reps, (_, r) => BigInt(r)),
    );
    const kk = Math.min(k, reps.length);
    return neighboursOf(await index.search(m, kk), kk, reps);
  } finally {
    await index.close();
  }
}

/**
 * Near copies in a document alignment: documents scoring at or above the band's max with each other (the
 * same article syndicated, or reformatted) collapse into one group before partners are chosen, so a
 * document with many copies still finds its real partners among its k nearest (the copies no longer
 * crowd them out). The group's first document stands for it; the alignment says which were its copies.
 */
import type { Neighbours } from './align-search.js';
import { UnionFind } from './cluster.js';

/** A near-copy group: the document that stands for it and the copies it stands for. */
export interface CopyGroup {
  doc: string;
  copies: string[];
}

/** Each of the n documents' representative: the lowest-numbered document of its near-copy group (itself when none). */
export function copyRepresentatives(first: Neighbours, n: number, max: number): Int32Array {
  const uf = new UnionFind();
  const { docs, k, ids, scores } = first;
  for (let r = 0; r < docs.length; r++) {
    for (let h = 0; h < k; h++) {
      const j = ids[r * k + h] as number;
      if (j >= 0 && (scores[r * k + h] as number) >= max) uf.union(docs[r] as number, j);
    }
  }
  const rep = Int32Array.from({ length: n }, (_, i) => i);
  for (const group of uf.clusters()) for (const i of group) rep[i] = group[0] as number;
  return rep;
}

/** The groups of more than one document, by their documents' ids. */
export function copyGroups(representative: Int32Array, idOf: (i: number) => string): CopyGroup[] {
  const members = new Map<number, string[]>();
  representative.forEach((r, i) => {
    if (r !== i) members.set(r, [...(members.get(r) ?? []), idOf(i)]);
  });
  return [...members].map(([r, copies]) => ({ doc: idOf(r), copies }));
}

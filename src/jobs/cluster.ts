/**
 * Multi-reference sets from accepted pairs (as MultiPIT's NMR set): union-find with path halving and
 * union by size, so clustering 10^8 pairs stays near-linear. Pairs are unordered (a-b = b-a).
 */
export class UnionFind {
  private readonly parent = new Map<number, number>();
  private readonly size = new Map<number, number>();

  find(x: number): number {
    if (!this.parent.has(x)) {
      this.parent.set(x, x);
      this.size.set(x, 1);
      return x;
    }
    let r = x;
    for (let p = this.parent.get(r) as number; p !== r; p = this.parent.get(r) as number) {
      const gp = this.parent.get(p) as number;
      this.parent.set(r, gp);
      r = gp;
    }
    return r;
  }

  union(a: number, b: number): void {
    let ra = this.find(a);
    let rb = this.find(b);
    if (ra === rb) return;
    if ((this.size.get(ra) as number) < (this.size.get(rb) as number)) [ra, rb] = [rb, ra];
    this.parent.set(rb, ra);
    this.size.set(ra, (this.size.get(ra) as number) + (this.size.get(rb) as number));
  }

  /** Clusters with at least two members, each sorted, ordered by their smallest id. */
  clusters(): number[][] {
    const groups = new Map<number, number[]>();
    for (const x of this.parent.keys()) {
      const r = this.find(x);
      const g = groups.get(r);
      if (g) g.push(x);
      else groups.set(r, [x]);
    }
    return [...groups.values()]
      .filter((g) => g.length > 1)
      .map((g) => g.sort((a, b) => a - b))
      .sort((a, b) => (a[0] as number) - (b[0] as number));
  }
}

/** The key of an unordered pair: the smaller id first. */
export function pairKey(a: number, b: number): string {
  return a < b ? `${a}:${b}` : `${b}:${a}`;
}

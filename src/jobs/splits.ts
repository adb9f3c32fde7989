/**
 * Dataset splits as the papers made them: Turku keeps every document on one side (pairs that share a
 * group value are connected, and a connected set of pairs goes to one split), MultiPIT splits by time
 * (earlier pairs train, later ones test). Units (connected sets, or single pairs) are laid out in order
 * (seeded random, or by time) and filled into the splits in turn up to each split's share of the pairs.
 */
import { prng } from '../index/index.js';
import { UnionFind } from './cluster.js';

export interface SplitPlan {
  names: string[];
  /** Shares of the pairs, summing to 1. */
  fractions: number[];
}

export interface PairFacts {
  /** The pair's group values (both sides'); pairs sharing one stay on one side. */
  groups: readonly string[];
  /** The pair's time or order value (the later side's), when ordering. */
  order?: number | undefined;
}

/** "train=0.8,val=0.1,test=0.1" or "0.8,0.1,0.1" (names train, val, test). */
export function parseSplitPlan(text: string): SplitPlan | string {
  const parts = text.split(',').map((p) => p.trim());
  const defaults = ['train', 'val', 'test'];
  const names: string[] = [];
  const fractions: number[] = [];
  for (const [i, p] of parts.entries()) {
    const m = /^(?:([A-Za-z][\w-]*)=)?([0-9.]+)$/.exec(p);
    const name = m?.[1] ?? defaults[i];
    const f = Number(m?.[2]);
    if (!m || name === undefined || !Number.isFinite(f) || f < 0) return `bad split "${p}"`;
    names.push(name);
    fractions.push(f);
  }
  const sum = fractions.reduce((a, b) => a + b, 0);
  if (Math.abs(sum - 1) > 1e-6) return `split shares add up to ${sum}, not 1`;
  if (new Set(names).size !== names.length) return 'split names repeat';
  return { names, fractions };
}

/**
 * The split of every pair (an index into plan.names). grouped: connected pairs stay together; ordered:
 * units by their earliest order value (else a seeded shuffle).
 */
export function assignSplits(
  facts: readonly PairFacts[],
  plan: SplitPlan,
  options: { grouped: boolean; ordered: boolean; seed: number },
): Int32Array {
  const units = options.grouped ? groupUnits(facts) : facts.map((_, i) => [i]);
  const key = (u: number[]) => Math.min(...u.map((i) => facts[i]?.order ?? Number.POSITIVE_INFINITY));
  if (options.ordered) {
    const keyed = units.map((u) => ({ u, k: key(u) }));
    keyed.sort((a, b) => a.k - b.k || (a.u[0] as number) - (b.u[0] as number));
    units.splice(0, units.length, ...keyed.map((x) => x.u));
  } else {
    const rand = prng(options.seed);
    for (let i = units.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [units[i], units[j]] = [units[j] as number[], units[i] as number[]];
    }
  }
  const out = new Int32Array(facts.length);
  const bounds: number[] = [];
  let acc = 0;
  for (const f of plan.fractions) {
    acc += f;
    bounds.push(acc * facts.length);
  }
  let split = 0;
  let filled = 0;
  for (const u of units) {
    // Move on once this split holds its share; a unit that would overshoot still goes whole.
    while (split < bounds.length - 1 && filled >= (bounds[split] as number) - 1e-9) split++;
    for (const i of u) out[i] = split;
    filled += u.length;
  }
  return out;
}

/** Connected sets of pairs: pairs sharing any group value, transitively; each sorted, by first pair. */
function groupUnits(facts: readonly PairFacts[]): number[][] {
  const uf = new UnionFind();
  const firstWith = new Map<string, number>();
  facts.forEach((f, i) => {
    uf.find(i);
    for (const g of f.groups) {
      const j = firstWith.get(g);
      if (j === undefined) firstWith.set(g, i);
      else uf.union(i, j);
    }
  });
  const byRoot = new Map<number, number[]>();
  for (let i = 0; i < facts.length; i++) {
    const r = uf.find(i);
    const list = byRoot.get(r);
    if (list) list.push(i);
    else byRoot.set(r, [i]);
  }
  return [...byRoot.values()].sort((a, b) => (a[0] as number) - (b[0] as number));
}

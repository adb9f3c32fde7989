/**
 * Length filters between the two sides of a pair, lengths in tokenCount() tokens (words, CJK
 * characters, emoji and punctuation tokens; see tokenize.ts).
 *
 *  - plr (ParaSCI's "length rate", keep < 1.0): |len(A) − len(B)| / min(len(A), len(B)).
 *  - lengthRatio (ParaTag, keep < 2.5): max(len(A), len(B)) / min(len(A), len(B)) = 1 + plr.
 *
 * Empty sides: both empty → plr 0, lengthRatio 1 (equal lengths); exactly one empty → Infinity,
 * so every "< threshold" filter rejects the pair. Infinity is a number (no null checks at call
 * sites) but JSON.stringify writes it as null: report it as a string or omit it in JSON output.
 * A filter should also enforce a minimum length (tokenCount, charLength): an empty pair passes
 * any plr filter.
 *
 * The *OfLengths forms take precomputed lengths (mining caches token counts per sentence).
 */
import { tokenCount } from './tokenize.js';

export function plrOfLengths(a: number, b: number): number {
  const lo = Math.min(a, b);
  const hi = Math.max(a, b);
  if (lo === 0) return hi === 0 ? 0 : Number.POSITIVE_INFINITY;
  return (hi - lo) / lo;
}

export function lengthRatioOfLengths(a: number, b: number): number {
  const lo = Math.min(a, b);
  const hi = Math.max(a, b);
  if (lo === 0) return hi === 0 ? 1 : Number.POSITIVE_INFINITY;
  return hi / lo;
}

/** |len(a) − len(b)| / min(len(a), len(b)) in tokens (ParaSCI PLR). */
export function plr(a: string, b: string): number {
  return plrOfLengths(tokenCount(a), tokenCount(b));
}

/** max(len) / min(len) in tokens (ParaTag length ratio). */
export function lengthRatio(a: string, b: string): number {
  return lengthRatioOfLengths(tokenCount(a), tokenCount(b));
}

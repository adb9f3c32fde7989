/**
 * How a reranker's label probabilities order candidates: by the probability that the pair is a
 * paraphrase, i.e. the summed probability of the positive labels. Positive labels: the usual binary
 * names (1, paraphrase, positive, yes, true), and for the Turku scheme every label with base >= 3
 * (3, 4, 4<, 4>, with or without flags i/s), the paper's own positive threshold.
 */
const BINARY_POSITIVE = /^(1|paraphrase|positive|yes|true|entailment)$/i;
const TURKU = /^([1-4])([<>]?)([is]*)$/;

export function isPositiveLabel(label: string, labels: readonly string[]): boolean {
  const turku = labels.length > 2 && labels.every((l) => TURKU.test(l));
  if (turku) return Number(TURKU.exec(label)?.[1]) >= 3;
  return BINARY_POSITIVE.test(label);
}

export function positiveProbability(
  probabilities: Record<string, number>,
  labels: readonly string[],
): number {
  let p = 0;
  for (const l of labels) if (isPositiveLabel(l, labels)) p += probabilities[l] ?? 0;
  return p;
}

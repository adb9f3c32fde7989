/**
 * Label schemes, the one module search ranking, the benchmarks and mining jobs share: how the label strings
 * of a pair file or a classifier map to paraphrase / not, and for the Turku scheme how a label splits into
 * base label, subsumption direction and flags.
 *
 * - binary: every label is one of 1 / paraphrase (positive) or 0 / not / not_paraphrase (negative), compared
 *   case-insensitively after trimming (MultiPIT, MRPC's `Quality`).
 * - turku: every label is `B[<|>][flags]` with base B in 1..4, an optional subsumption direction and flags from
 *   `i`, `s` (Kanerva et al. 2023: `4>is` = base 4, subsumption `>`, flags i and s), and at least one label
 *   is not plain `1` (a file of only `1` is binary). Positive when base >= 3, as in the paper.
 * - positive-only: no labels at all (ParaSCI, MultiPIT_Auto): every pair is a positive.
 * - custom: anything else; positive only for the labels given in `positive`, otherwise unknown (undefined).
 *
 * In every scheme a missing label (undefined) is a positive: files without labels hold positive pairs only.
 * `opts.positive` overrides which labels are positive: an entry matches a label exactly, or (turku) its base
 * label, so `['4']` makes 4, 4<, 4>i … positive and 3 negative. A label outside the scheme's vocabulary maps
 * to undefined (neither positive nor negative).
 */

export type SchemeName = 'binary' | 'turku' | 'positive-only' | 'custom';

export interface LabelScheme {
  name: SchemeName;
  /** true = paraphrase, false = not, undefined = the scheme cannot say (unknown label). Missing label = true. */
  isPositive(label?: string): boolean | undefined;
  /** Turku: the base label without subsumption and flags (`4>is` -> `4`); other schemes: the label itself. */
  base(label: string): string;
  /** Turku: the flags present, sorted and unique (`4>si` -> ['i', 's']); other schemes: []. */
  flags(label: string): string[];
  /** Turku: the subsumption direction (`4<` -> '<'); other schemes: undefined. */
  subsumption(label: string): '<' | '>' | undefined;
  /** One spelling per label, so gold and predicted compare equal (Turku: `4>si` -> `4>is`); else the label. */
  canonical(label: string): string;
  /**
   * The group a positive pair is reported under in retrieval (Kanerva et al., Fig. 11). Turku: `4` (flags
   * ignored), `4< or 4>` (either direction, flags ignored), `3`, and `2` / `1` as themselves. Other schemes:
   * the label itself; a missing label is `unlabeled`.
   */
  retrievalGroup(label?: string): string;
}

export interface SchemeOptions {
  /** Labels that count as positive (matched exactly, or against the Turku base label). */
  positive?: readonly string[];
}

export const BINARY_POSITIVE: readonly string[] = ['1', 'paraphrase'];
export const BINARY_NEGATIVE: readonly string[] = ['0', 'not', 'not_paraphrase'];
/** Retrieval group of a positive pair without a label. */
export const UNLABELED = 'unlabeled';
/** Retrieval group of Turku base-4 labels with a subsumption direction. */
export const TURKU_SUBSUMED = '4< or 4>';
/** Turku retrieval groups in the order the paper reports them. */
export const TURKU_GROUPS: readonly string[] = ['4', TURKU_SUBSUMED, '3', '2', '1'];

const TURKU = /^([1-4])([<>]?)([is]*)$/;

interface TurkuParts {
  base: string;
  sub: '<' | '>' | undefined;
  flags: string[];
}

export function parseTurku(label: string): TurkuParts | undefined {
  const m = TURKU.exec(label.trim());
  if (!m) return undefined;
  const sub = m[2] === '<' || m[2] === '>' ? m[2] : undefined;
  return { base: m[1] ?? '', sub, flags: [...new Set(m[3] ?? '')].sort() };
}

const norm = (label: string) => label.trim().toLowerCase();

/** Chooses the scheme that explains every label (undefined entries are missing labels). */
export function detectScheme(
  labels: ReadonlyArray<string | undefined>,
  opts: SchemeOptions = {},
): LabelScheme {
  const present = labels.filter((l): l is string => l !== undefined);
  const positive = opts.positive === undefined ? undefined : new Set(opts.positive.map(norm));
  if (present.length === 0) return positiveOnly(positive);
  const binaryVocab = new Set([...BINARY_POSITIVE, ...BINARY_NEGATIVE]);
  if (present.every((l) => binaryVocab.has(norm(l)))) return binary(positive);
  if (present.every((l) => parseTurku(l) !== undefined)) return turku(positive);
  return custom(positive);
}

function plain(name: SchemeName, isPositive: (label: string) => boolean | undefined): LabelScheme {
  return {
    name,
    isPositive: (label) => (label === undefined ? true : isPositive(label)),
    base: (label) => label,
    flags: () => [],
    subsumption: () => undefined,
    canonical: (label) => label,
    retrievalGroup: (label) => label ?? UNLABELED,
  };
}

function positiveOnly(positive: Set<string> | undefined): LabelScheme {
  return plain('positive-only', (label) => (positive === undefined ? undefined : positive.has(norm(label))));
}

function binary(positive: Set<string> | undefined): LabelScheme {
  return plain('binary', (label) => {
    const l = norm(label);
    if (positive !== undefined) return positive.has(l);
    if (BINARY_POSITIVE.includes(l)) return true;
    if (BINARY_NEGATIVE.includes(l)) return false;
    return undefined;
  });
}

function custom(positive: Set<string> | undefined): LabelScheme {
  return plain('custom', (label) => (positive === undefined ? undefined : positive.has(norm(label))));
}

function turku(positive: Set<string> | undefined): LabelScheme {
  return {
    name: 'turku',
    isPositive(label) {
      if (label === undefined) return true;
      const p = parseTurku(label);
      if (positive !== undefined)
        return positive.has(norm(label)) || (p !== undefined && positive.has(p.base));
      return p === undefined ? undefined : Number(p.base) >= 3;
    },
    base: (label) => parseTurku(label)?.base ?? label,
    flags: (label) => parseTurku(label)?.flags ?? [],
    subsumption: (label) => parseTurku(label)?.sub,
    canonical(label) {
      const p = parseTurku(label);
      return p === undefined ? label : `${p.base}${p.sub ?? ''}${p.flags.join('')}`;
    },
    retrievalGroup(label) {
      if (label === undefined) return UNLABELED;
      const p = parseTurku(label);
      if (p === undefined) return label;
      return p.base === '4' && p.sub !== undefined ? TURKU_SUBSUMED : p.base;
    },
  };
}

/**
 * Label names that no data-file scheme above treats as positive but that a classifier's id2label commonly
 * uses for "same meaning" (NLI heads, yes/no heads). Only a fallback for models whose config.json does not
 * declare its positive labels.
 */
const MODEL_POSITIVE_GUESS = /^(positive|yes|true|entailment)$/i;

/**
 * The labels of a pair classifier that mean "paraphrase". `declared` (config.json's
 * `paramine.positive_labels`, written by the training scripts) wins; without it the scheme detected from
 * the label names decides (binary: 1 / paraphrase; Turku: base >= 3), and failing that the usual names of
 * positive classes (positive, yes, true, entailment).
 */
export function positiveLabelsOf(labels: readonly string[], declared?: readonly string[]): string[] {
  if (declared !== undefined) return labels.filter((l) => declared.includes(l));
  const scheme = detectScheme(labels);
  const positive = labels.filter((l) => scheme.isPositive(l) === true);
  return positive.length > 0 ? positive : labels.filter((l) => MODEL_POSITIVE_GUESS.test(l));
}

/** The probability that a pair is a paraphrase: the summed probability of the positive labels. */
export function positiveProbability(
  probabilities: Readonly<Record<string, number>>,
  positive: readonly string[],
): number {
  let p = 0;
  for (const l of positive) p += probabilities[l] ?? 0;
  return p;
}

/**
 * The label of a pair at a cut on P(paraphrase): the most likely positive label when the summed positive
 * probability reaches `threshold`, else the most likely of the others. Without a threshold, the arg-max.
 */
export function labelAt(
  probabilities: Readonly<Record<string, number>>,
  positive: readonly string[],
  threshold?: number,
): string {
  const labels = Object.keys(probabilities);
  const best = (ls: readonly string[]) =>
    ls.reduce((a, b) => ((probabilities[b] ?? 0) > (probabilities[a] ?? 0) ? b : a), ls[0] as string);
  if (threshold === undefined || positive.length === 0 || positive.length === labels.length)
    return best(labels);
  const side = positiveProbability(probabilities, positive) >= threshold;
  return best(labels.filter((l) => positive.includes(l) === side));
}

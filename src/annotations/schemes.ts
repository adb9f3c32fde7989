/**
 * The label schemes a person annotates in, and what the accept / reject shortcuts mean in each:
 * - binary: `paraphrase` / `not_paraphrase` (the committed cross-encoder's labels; `1` / `0` are taken
 *   and stored as these);
 * - turku: Kanerva et al.'s `B[<|>][flags]`, base 1-4, subsumption `<` or `>`, flags `i`, `s`, stored in
 *   one spelling (`4>si` -> `4>is`). Accept is `4`; reject is `2` (related but not a paraphrase: what a
 *   rejected near neighbour usually is); `1` (unrelated) is typed.
 */

import { ParamineError } from '../errors.js';
import { BINARY_NEGATIVE, BINARY_POSITIVE, parseTurku } from '../text/labels.js';

export const SCHEMES = ['binary', 'turku'] as const;
export type AnnotationScheme = (typeof SCHEMES)[number];
export type Decision = 'accept' | 'reject' | 'label';

export interface SchemeInfo {
  name: AnnotationScheme;
  /** The label each shortcut stores. */
  accept: string;
  reject: string;
  /** The labels offered as choices (Turku: the bases; subsumption and flags are typed on top). */
  labels: string[];
  /** Labels counted as paraphrases, as the training scripts and benchmarks count them. */
  positive: string[];
}

export const SCHEME_INFO: Record<AnnotationScheme, SchemeInfo> = {
  binary: {
    name: 'binary',
    accept: 'paraphrase',
    reject: 'not_paraphrase',
    labels: ['paraphrase', 'not_paraphrase'],
    positive: ['paraphrase'],
  },
  turku: {
    name: 'turku',
    accept: '4',
    reject: '2',
    labels: ['4', '3', '2', '1'],
    positive: ['4', '3'],
  },
};

/** The label a decision stores: the scheme's accept / reject label, or the given one in its canonical form. */
export function labelFor(scheme: AnnotationScheme, decision: Decision, label: string | undefined): string {
  if (decision === 'accept') return SCHEME_INFO[scheme].accept;
  if (decision === 'reject') return SCHEME_INFO[scheme].reject;
  if (label === undefined) {
    throw new ParamineError('BAD_INPUT', 'label: required when decision is "label"', { field: 'label' });
  }
  const canonical = canonicalLabel(scheme, label);
  if (canonical === undefined) {
    const expected =
      scheme === 'binary'
        ? 'paraphrase or not_paraphrase (1 or 0)'
        : 'a Turku label: 1-4, then < or > and flags i, s (e.g. 4, 4>, 3i, 4<is)';
    throw new ParamineError(
      'BAD_INPUT',
      `label: "${label}" is not in the ${scheme} scheme; use ${expected}`,
      {
        field: 'label',
      },
    );
  }
  return canonical;
}

function canonicalLabel(scheme: AnnotationScheme, label: string): string | undefined {
  const l = label.trim().toLowerCase();
  if (scheme === 'binary') {
    if (BINARY_POSITIVE.includes(l)) return 'paraphrase';
    if (BINARY_NEGATIVE.includes(l)) return 'not_paraphrase';
    return undefined;
  }
  const p = parseTurku(l);
  return p === undefined ? undefined : `${p.base}${p.sub ?? ''}${p.flags.join('')}`;
}

/**
 * What a job accepts as a pair: the search options its spec gives the core, the same-key exclusion of a
 * global search, and the whole acceptance test (filters, then the cross-encoder's verdict) that hard-
 * negative mining turns around: a negative is a top-k candidate the job would not accept.
 */
import { ParamineError } from '../errors.js';
import type { AnnOptions } from '../search/core.js';
import { evaluateFilter, filterLabels } from '../search/lexical.js';
import type { Candidate, SearchOptions } from '../search/types.js';
import type { GroupView, Meta } from '../store/index.js';
import { checkScope } from './scoped.js';
import { effectiveFilter, effectiveScope, type JobSpec } from './spec.js';
import { withoutLengthBounds } from './subsentence.js';

/** What the job asks of the index besides k: nprobe, or a recall to meet. */
export function annOptionsOf(spec: JobSpec): AnnOptions {
  return {
    ...(spec.nprobe === undefined ? {} : { nprobe: spec.nprobe }),
    ...(spec.recall === undefined ? {} : { recall: spec.recall }),
  };
}

/** The core's options for a job. Negatives: no filters in the core, the job applies them turned around. */
export function searchOptionsOf(spec: JobSpec): SearchOptions {
  const scope = effectiveScope(spec);
  const negatives = scope.negatives;
  return {
    k: spec.k,
    candidates: spec.k,
    ...(spec.nprobe === undefined ? {} : { nprobe: spec.nprobe }),
    ...(spec.recall === undefined ? {} : { recall: spec.recall }),
    rerank: spec.rerank !== undefined,
    ...(spec.domain === undefined ? {} : { domain: spec.domain }),
    ...labelOptions(spec, negatives),
    ...(spec.rerank?.minProbability === undefined || negatives
      ? {}
      : { minProbability: spec.rerank.minProbability }),
    ...(scope.minCosine === undefined ? {} : { minCosine: scope.minCosine }),
    // Sub-sentence mining sees the candidates the length bounds reject, and tries their spans.
    filter: negatives
      ? {}
      : spec.subSentence
        ? withoutLengthBounds(effectiveFilter(spec))
        : effectiveFilter(spec),
    excludeDuplicates: true,
  };
}

/** Who labels a job's pairs and, unless it mines negatives, which labels it keeps. */
function labelOptions(spec: JobSpec, negatives: boolean): Pick<SearchOptions, 'labels'> {
  const keep = negatives ? undefined : spec.rerank?.labels;
  const mode = spec.rerank?.mode;
  if (mode === undefined) return keep ? { labels: keep } : {};
  return { labels: { mode, ...(keep ? { keep } : {}) } };
}

const valuesOf = (meta: Meta | undefined, key: string): string[] => {
  const v = meta?.[key];
  const list = Array.isArray(v) ? v : [v];
  return list.filter((x) => x !== undefined && x !== null && x !== '').map(String);
};

/** Whether two sentences share a metadata value under any of the keys (a global search's excludeSame). */
export function excludedBySameKey(
  keys: readonly string[],
  a: Meta | undefined,
  b: Meta | undefined,
): boolean {
  for (const key of keys) {
    const mine = new Set(valuesOf(a, key));
    if (mine.size > 0 && valuesOf(b, key).some((v) => mine.has(v))) return true;
  }
  return false;
}

/** Whether the job accepts the candidate: its filters pass and, with rerank, the cross-encoder says yes. */
export function acceptsPair(
  spec: JobSpec,
  positiveLabels: readonly string[],
  query: string,
  c: Pick<Candidate, 'text' | 'lexical' | 'label' | 'probabilities'>,
): boolean {
  if (evaluateFilter(query, c.text, effectiveFilter(spec), c.lexical, c.probabilities) !== true) return false;
  if (spec.rerank === undefined || c.label === undefined) return true;
  const labels = spec.rerank.labels ?? positiveLabels;
  if (!labels.includes(c.label)) return false;
  const min = spec.rerank.minProbability;
  return min === undefined || (c.probabilities?.[c.label] ?? 0) >= min;
}

/**
 * A new job's scope, filters and negatives against the index and the models (4xx errors naming the
 * field): group tables for withinGroup and window keys, probability bounds on labels the cross-encoder
 * has (and only with rerank), something to reject when mining negatives.
 */
export function checkJobScope(
  spec: JobSpec,
  labels: readonly string[] | undefined,
  tables: GroupView | undefined,
): void {
  const scope = effectiveScope(spec);
  const docPairs = spec.docPairs && { key: spec.docPairs.docKey, partners: new Map() };
  checkScope({ ...scope, exactMax: 0, docPairs }, tables);
  if (spec.since !== undefined) {
    // Scopes that only restrict candidates (withinGroup, window) keep "a pair with a new sentence" local;
    // margin scores and document alignment change for old pairs too when sentences arrive.
    const clash =
      spec.scope.kind !== 'all'
        ? 'scope (only `all`)'
        : spec.margin !== undefined
          ? 'margin (new sentences change the neighbourhood means of old pairs)'
          : spec.docPairs !== undefined
            ? 'docPairs (new sentences change the document alignment)'
            : undefined;
    if (clash !== undefined) {
      throw new ParamineError('BAD_INPUT', `since cannot be combined with ${clash}`, { field: 'since' });
    }
  } else if (spec.reverseDepth !== undefined) {
    throw new ParamineError('BAD_INPUT', 'reverseDepth goes with since', { field: 'reverseDepth' });
  }
  const filter = effectiveFilter(spec);
  const named = filterLabels(filter);
  if (named.length > 0 && spec.rerank === undefined) {
    throw new ParamineError('BAD_INPUT', 'probability bounds in the filter need rerank (the cross-encoder)', {
      field: 'filter',
    });
  }
  const unknown = named.filter((l) => !(labels ?? []).includes(l));
  if (unknown.length > 0) {
    throw new ParamineError(
      'BAD_INPUT',
      `unknown label(s) ${unknown.join(', ')} in the filter; the cross-encoder has ${(labels ?? []).join(', ')}`,
      { field: 'filter' },
    );
  }
  if (scope.negatives && spec.rerank === undefined && Object.keys(filter).length === 0) {
    throw new ParamineError(
      'BAD_INPUT',
      'negatives are the pairs the filters or the cross-encoder reject: give a filter or rerank',
      { field: 'negatives' },
    );
  }
}

/**
 * Sub-sentence pairs (ParaSCI): a short sentence that paraphrases part of a long one. For a candidate the
 * whole-sentence filters reject, the longer side is cut into clause runs (text/clauses.ts), every run is
 * embedded, and the run closest to the shorter side by the encoder's cosine (of the runs the filters
 * allow) is the span (best-clause, the paper's baseline). The pair (shorter, span) is kept when its cosine reaches `minCosine` and it passes
 * the job's filters; it carries the span's character offsets in the longer sentence. The span method
 * (spanModelPairs) asks a span model (rerank/span.ts) for the span instead and keeps the same gates.
 */

import type { SpanHit, SpanQuery } from '../rerank/index.js';
import { evaluateFilter, type LexicalFilter, lexicalMeasures } from '../search/lexical.js';
import type { Candidate } from '../search/types.js';
import { bestSpan, clauseRuns, type TextSpan, tokenCount } from '../text/index.js';

export interface SpanFound {
  /** Which side of the pair (a = the query, b = the candidate) the span cuts. */
  side: 'a' | 'b';
  start: number;
  end: number;
  /** Cosine of the span and the other side. */
  cosine: number;
  method: 'best-clause' | 'span';
  /** The span model's score (its span's start + end logit over the no-span score); span method only. */
  score?: number;
}

export interface SubSentencePair {
  query: number;
  candidate: Candidate;
  span: SpanFound;
  lexical: ReturnType<typeof lexicalMeasures>;
}

interface Pending {
  query: number;
  candidate: Candidate;
  side: 'a' | 'b';
  shorter: string;
  runs: TextSpan[];
}

/** The filter without its length bounds: what a sub-sentence candidate must pass as a whole pair first. */
export function withoutLengthBounds(f: LexicalFilter): LexicalFilter {
  const { plrMax: _p, lengthRatioMax: _l, ...rest } = f;
  return rest;
}

/**
 * Best-clause spans for the candidates the full filter rejects. `embed` gives unit vectors (the job's
 * encoder); at most one embedding call for the whole batch.
 */
export async function bestClausePairs(
  queries: readonly string[],
  rows: ReadonlyArray<readonly Candidate[]>,
  filter: LexicalFilter,
  minCosine: number,
  embed: (texts: string[]) => Promise<Float32Array>,
): Promise<SubSentencePair[]> {
  const pending: Pending[] = [];
  rows.forEach((row, q) => {
    const a = queries[q] as string;
    for (const c of row) {
      if (evaluateFilter(a, c.text, filter, c.lexical, c.probabilities) !== false) continue;
      const side = tokenCount(a) > tokenCount(c.text) ? 'a' : 'b';
      const longer = side === 'a' ? a : c.text;
      const runs = clauseRuns(longer, { minChars: 10 });
      if (runs.length > 0)
        pending.push({ query: q, candidate: c, side, shorter: side === 'a' ? c.text : a, runs });
    }
  });
  if (pending.length === 0) return [];
  const texts = pending.flatMap((p) => [p.shorter, ...p.runs.map((r) => r.text)]);
  const vectors = await embed(texts);
  const dim = vectors.length / texts.length;
  const out: SubSentencePair[] = [];
  let at = 0;
  for (const p of pending) {
    const base = at;
    at += 1 + p.runs.length;
    // The closest run among those the filters allow (a longer run may be closer but fail the length bounds).
    const scores = p.runs.map((run, i) => {
      if (evaluateFilter(p.shorter, run.text, filter) === false) return Number.NEGATIVE_INFINITY;
      let s = 0;
      for (let d = 0; d < dim; d++)
        s += (vectors[base * dim + d] as number) * (vectors[(base + 1 + i) * dim + d] as number);
      return s;
    });
    const best = bestSpan(p.runs, scores);
    if (best === undefined || best.score < minCosine) continue;
    const lexical = lexicalMeasures(p.shorter, best.span.text);
    out.push({
      query: p.query,
      candidate: p.candidate,
      span: {
        side: p.side,
        start: best.span.start,
        end: best.span.end,
        cosine: best.score,
        method: 'best-clause',
      },
      lexical,
    });
  }
  return out;
}

/** The rejected candidates of each row, with which side is longer. */
function rejected(
  queries: readonly string[],
  rows: ReadonlyArray<readonly Candidate[]>,
  filter: LexicalFilter,
): Array<{ query: number; candidate: Candidate; side: 'a' | 'b'; shorter: string; longer: string }> {
  const out: ReturnType<typeof rejected> = [];
  rows.forEach((row, q) => {
    const a = queries[q] as string;
    for (const c of row) {
      if (evaluateFilter(a, c.text, filter, c.lexical, c.probabilities) !== false) continue;
      const side = tokenCount(a) > tokenCount(c.text) ? 'a' : 'b';
      out.push({
        query: q,
        candidate: c,
        side,
        shorter: side === 'a' ? c.text : a,
        longer: side === 'a' ? a : c.text,
      });
    }
  });
  return out;
}

/**
 * Span-model spans for the candidates the full filter rejects: the model points at the part of the longer
 * sentence that paraphrases the shorter one (or at none); a span is kept when the (shorter, span) pair
 * passes the filter and its cosine by the job's encoder reaches `minCosine`, as for best-clause.
 */
export async function spanModelPairs(
  queries: readonly string[],
  rows: ReadonlyArray<readonly Candidate[]>,
  filter: LexicalFilter,
  minCosine: number,
  embed: (texts: string[]) => Promise<Float32Array>,
  find: (items: SpanQuery[]) => Promise<Array<SpanHit | null>>,
): Promise<SubSentencePair[]> {
  const pending = rejected(queries, rows, filter);
  if (pending.length === 0) return [];
  const hits = await find(pending.map((p) => ({ question: p.shorter, text: p.longer })));
  const found = pending.flatMap((p, i) => {
    const h = hits[i];
    if (h === null || h === undefined) return [];
    const text = p.longer.slice(h.start, h.end);
    // A span that is the whole sentence adds nothing the whole-sentence filter has not already refused.
    if (text.length === p.longer.trim().length) return [];
    if (evaluateFilter(p.shorter, text, filter) === false) return [];
    return [{ ...p, hit: h, text }];
  });
  if (found.length === 0) return [];
  const vectors = await embed(found.flatMap((f) => [f.shorter, f.text]));
  const dim = vectors.length / (2 * found.length);
  const out: SubSentencePair[] = [];
  found.forEach((f, k) => {
    let cosine = 0;
    for (let d = 0; d < dim; d++)
      cosine += (vectors[2 * k * dim + d] as number) * (vectors[(2 * k + 1) * dim + d] as number);
    if (cosine < minCosine) return;
    out.push({
      query: f.query,
      candidate: f.candidate,
      span: { side: f.side, start: f.hit.start, end: f.hit.end, cosine, method: 'span', score: f.hit.score },
      lexical: lexicalMeasures(f.shorter, f.text),
    });
  });
  return out;
}

/**
 * The one job runner behind POST /v1/jobs and `paramine mine`: batches of query sentences through the
 * shared search core (ANN -> lexical filters -> optional rerank), then margin, group and pair
 * de-duplication, one LMDB transaction per batch. It yields to the event loop between batches so
 * interactive queries keep flowing, and stops at a batch boundary when asked.
 */
import { join } from 'node:path';
import { setImmediate as nextTick } from 'node:timers/promises';
import { ParamineError } from '../errors.js';
import { resolveModelDir } from '../models/resolve.js';
import { SpanModel } from '../rerank/index.js';
import { evaluateFilter } from '../search/lexical.js';
import type { Candidate, CandidateDomain, SearchOptions } from '../search/types.js';
import { dedupKey } from '../text/index.js';
import { clearCheckpoint } from './align-checkpoint.js';
import { pairKey, UnionFind } from './cluster.js';
import { openJobSource } from './grouped-source.js';
import { groupsOf, type JobContext, type RunControl, sourceParts } from './job-context.js';
import { scopedSearch, stageWriter } from './job-scope.js';
import { NeighbourhoodMeans, ratioMargin } from './margin.js';
import { acceptsPair, annOptionsOf, excludedBySameKey, searchOptionsOf } from './pairs.js';
import { type QueryBatch, type QuerySource, type SourceParts, vectorsForIds } from './queries.js';
import type { ScopedSearch } from './scoped.js';
import { openSinceSource, type SinceSource, storedSinceSource } from './since.js';
import { effectiveFilter, effectiveScope, type JobSpec, rampedBatchSize } from './spec.js';
import type { JobRecord, JobStore, MinedPair } from './store.js';
import { bestClausePairs, type SubSentencePair, spanModelPairs } from './subsentence.js';

/** A job's query sentences: only what is new for `since`, else its scope's (creation and every run alike). */
export async function openJobQueries(
  spec: JobSpec,
  ctx: JobContext,
  parts = sourceParts(ctx, spec),
  stored?: { first: number; ids: readonly number[] },
): Promise<QuerySource | SinceSource> {
  if (spec.since === undefined) return openJobSource(spec, parts, groupsOf(ctx, parts.ntotal));
  if (stored !== undefined) return storedSinceSource(parts, stored);
  return openSinceSource(spec, spec.since, parts, ctx.live ?? ctx.ann);
}

/** The key of a pair: index ids when both sides have one, else the query's dedup key. */
function keyOf(aId: number | null, aText: string, bId: number): string {
  return aId === null ? `q:${dedupKey(aText)}:${bId}` : pairKey(aId, bId);
}

export async function runJob(
  initial: JobRecord,
  ctx: JobContext,
  jobs: JobStore,
  control: RunControl,
): Promise<JobRecord> {
  const spec = initial.spec;
  if (initial.index.identity !== ctx.index.identity) {
    throw new ParamineError(
      'CONFLICT',
      `job ${initial.id} was started on another build of index ${initial.index.name}; start a new job`,
    );
  }
  const parts = sourceParts(ctx, spec);
  const source = await openJobQueries(spec, ctx, parts, jobs.queriesOf(initial.id));
  if (source.total !== initial.total) {
    throw new ParamineError(
      'CONFLICT',
      `the job's query sentences changed since it started (${initial.total} then, ${source.total} now)`,
    );
  }
  const stage = stageWriter(jobs, initial);
  const scoped = await scopedSearch(ctx, spec, stage.report, alignWork(jobs, initial.id));
  await stage.flush();
  const run: BatchRun = {
    ctx,
    jobs,
    parts,
    spec,
    options: searchOptionsOf(spec),
    margins: spec.margin
      ? new NeighbourhoodMeans(ctx.ann, spec.margin.k, annOptionsOf(spec), parts.ntotal)
      : undefined,
    scoped,
    span: undefined,
    firstNew: 'first' in source ? (source as SinceSource).first : undefined,
  };
  try {
    const sub = spec.subSentence;
    // The span model lives as long as the run (its own worker thread), opened by name or directory.
    if (sub?.method === 'span')
      run.span = await SpanModel.open(resolveModelDir(sub.model, 'subSentence.model'));
    return await runBatches(run, initial, source, control);
  } finally {
    await run.scoped?.close();
    await run.span?.close();
  }
}

async function runBatches(
  run: BatchRun,
  initial: JobRecord,
  source: Awaited<ReturnType<typeof openJobSource>>,
  control: RunControl,
): Promise<JobRecord> {
  const { jobs, spec } = run;
  // A job resumed after a full disk carries its failure: it is running again.
  // A stage left by a crash during alignment is over once mining runs.
  const { error: _error, finishedAt: _finishedAt, stage: _stage, ...carried } = initial;
  let job: JobRecord = {
    ...carried,
    state: 'running',
    startedAt: initial.startedAt ?? new Date().toISOString(),
  };
  await jobs.put(job);
  let batches = 0;
  while (job.processed < job.total) {
    const stop = control.stop();
    if (stop === 'pause') return job;
    if (stop === 'cancel') return finish(jobs, job, 'cancelled');
    const t0 = performance.now();
    const size = rampedBatchSize(batches++, spec.batchSize);
    const batch = await source.batch(job.processed, Math.min(size, job.total - job.processed));
    const accepted = await minedPairs(run, job, batch);
    const next: JobRecord = {
      ...job,
      processed: job.processed + batch.texts.length,
      pairs: job.pairs + accepted.size,
      runMs: job.runMs + (performance.now() - t0),
    };
    await jobs.commitBatch(
      job,
      [...accepted].map(([key, pair]) => ({ key, pair })),
      next,
    );
    job = next;
    control.onBatch?.(job);
    // Let queued HTTP requests run between batches.
    await nextTick();
  }
  if (spec.cluster) job = await writeClusters(jobs, job);
  return finish(jobs, job, 'done');
}

/** What every batch of one job runs with. */
interface BatchRun {
  ctx: JobContext;
  jobs: JobStore;
  parts: SourceParts;
  spec: JobSpec;
  options: SearchOptions;
  margins: NeighbourhoodMeans | undefined;
  scoped: ScopedSearch | undefined;
  /** The span model of `subSentence: {method: "span"}`. */
  span: SpanModel | undefined;
  /** A `since` job: queries older than this id keep only candidates from it on. */
  firstNew: number | undefined;
}

/** One batch's new pairs by key: searched, group- and pair-deduplicated, margin-filtered. */
async function minedPairs(run: BatchRun, job: JobRecord, batch: QueryBatch): Promise<Map<string, MinedPair>> {
  const { spec, scoped } = run;
  const scope = effectiveScope(spec);
  const accepted = new Map<string, MinedPair>();
  const hits = scoped ? await scoped.hits(batch, spec.k + 1) : undefined;
  const { results } = await run.ctx.core.searchVectors(batch.texts, batch.vectors, run.options, {
    excludeIds: batch.ids.map((id) => id ?? undefined),
    fixedDepth: true,
    ...(hits === undefined ? {} : { hits }),
    keep: (q, c) => {
      const qId = batch.ids[q] ?? null;
      if (qId === c.id || batch.deleted?.has(q)) return false;
      // Sentences added after the job started are not part of it (the next `since` job has them).
      if (c.id >= run.parts.ntotal) return false;
      if (run.firstNew !== undefined && qId !== null && qId < run.firstNew && c.id < run.firstNew)
        return false;
      if (!scoped && excludedBySameKey(scope.excludeSame, batch.metas[q], c.meta)) return false;
      const key = keyOf(qId, batch.texts[q] as string, c.id);
      return !accepted.has(key) && !run.jobs.hasPair(job.id, key);
    },
  });
  if (scope.negatives) {
    // Hard negatives: of the top k, the pairs the filters or the cross-encoder reject.
    for (const r of results)
      r.candidates = r.candidates.filter((c) => !acceptsPair(spec, run.ctx.core.positiveLabels, r.query, c));
  }
  const spans = spec.subSentence
    ? await splitSubSentence(spec, results, (texts) => run.ctx.encoder.encode(texts), run.span)
    : [];
  const marginsOf = run.margins ? await batchMargins(run.margins, batch, results, run.parts) : undefined;
  results.forEach((r, q) => {
    const qId = batch.ids[q] ?? null;
    for (const c of r.candidates) {
      const margin = marginsOf?.get(q)?.get(c.id);
      if (spec.margin?.min !== undefined && (margin === undefined || margin < spec.margin.min)) continue;
      const key = keyOf(qId, r.query, c.id);
      if (accepted.has(key)) continue;
      const meta = batch.metas[q];
      const query = { id: qId, text: r.query, ...(meta === undefined ? {} : { meta }) };
      const found = { id: c.id, text: c.text, ...(c.meta === undefined ? {} : { meta: c.meta }) };
      // Canonical order, the lower id first: a pair reads the same whichever side was queried (its label
      // and lexical measures are symmetric), so the CLI and the API give identical pairs.
      const [a, b] = qId !== null && c.id < qId ? [found, query] : [query, found];
      accepted.set(key, {
        a,
        b,
        cosine: c.cosine,
        ...(margin === undefined ? {} : { margin }),
        ...(c.label === undefined ? {} : { label: c.label }),
        ...(c.probabilities === undefined ? {} : { probabilities: c.probabilities }),
        ...(c.labeledBy === undefined ? {} : { labeledBy: c.labeledBy }),
        lexical: c.lexical,
        ...(c.bertScore === undefined ? {} : { bertScore: c.bertScore }),
        ...(c.domain === undefined ? {} : { domain: pairDomain(c.domain) }),
      });
    }
  });
  for (const sp of spans) {
    const qId = batch.ids[sp.query] ?? null;
    const key = keyOf(qId, batch.texts[sp.query] as string, sp.candidate.id);
    if (accepted.has(key)) continue;
    const meta = batch.metas[sp.query];
    const c = sp.candidate;
    accepted.set(key, {
      a: { id: qId, text: batch.texts[sp.query] as string, ...(meta === undefined ? {} : { meta }) },
      b: { id: c.id, text: c.text, ...(c.meta === undefined ? {} : { meta: c.meta }) },
      cosine: c.cosine,
      lexical: sp.lexical,
      span: sp.span,
    });
  }
  return accepted;
}

/**
 * Sub-sentence mining: the rows keep the candidates that pass the whole-sentence filter; those it rejects
 * are tried as best-clause or span-model spans (returned apart, their rows' entries removed).
 */
async function splitSubSentence(
  spec: JobSpec,
  results: Array<{ query: string; candidates: Candidate[] }>,
  embed: (texts: string[]) => Promise<Float32Array>,
  span: SpanModel | undefined,
): Promise<SubSentencePair[]> {
  const filter = effectiveFilter(spec);
  const sub = spec.subSentence as NonNullable<JobSpec['subSentence']>;
  const queries = results.map((r) => r.query);
  const rows = results.map((r) => r.candidates);
  const found =
    sub.method === 'span' && span !== undefined
      ? await spanModelPairs(queries, rows, filter, sub.minCosine, embed, (items) => span.find(items))
      : await bestClausePairs(queries, rows, filter, sub.minCosine, embed);
  for (const r of results) {
    r.candidates = r.candidates.filter(
      (c) => evaluateFilter(r.query, c.text, filter, c.lexical, c.probabilities) !== false,
    );
  }
  return found;
}

/** Groups the job's pairs into multi-reference sets (connected components). */
async function writeClusters(jobs: JobStore, job: JobRecord): Promise<JobRecord> {
  const uf = new UnionFind();
  for (const { pair } of jobs.pairs(job.id))
    if (pair.a.id !== null && pair.b.id !== null) uf.union(pair.a.id, pair.b.id);
  const clusters = uf.clusters();
  const next = { ...job, clusters: clusters.length };
  await jobs.writeClusters(next, clusters);
  return next;
}

/** Both sides' σ and weight (a = the query side) and the pair's domain score, as a mined pair keeps them. */
function pairDomain(d: CandidateDomain): NonNullable<MinedPair['domain']> {
  return {
    a: { sigma: d.querySigma, weight: d.queryWeight },
    b: { sigma: d.sigma, weight: d.weight },
    ...(d.score === undefined ? {} : { score: d.score }),
  };
}

async function finish(jobs: JobStore, job: JobRecord, state: 'done' | 'cancelled'): Promise<JobRecord> {
  const done: JobRecord = { ...job, state, finishedAt: new Date().toISOString() };
  await jobs.put(done);
  await clearCheckpoint(alignWork(jobs, job.id));
  return done;
}

/** Where a job's document alignment keeps its work until the job ends. */
export const alignWork = (jobs: JobStore, id: string): string => join(jobs.dir, 'align', id);

/** Margin of every surviving candidate, per query row. */
async function batchMargins(
  margins: NeighbourhoodMeans,
  batch: QueryBatch,
  results: ReadonlyArray<{ candidates: ReadonlyArray<{ id: number; cosine: number }> }>,
  parts: SourceParts,
): Promise<Map<number, Map<number, number>>> {
  const load = (ids: number[]) => vectorsForIds(parts, ids);
  const candidateIds = results.flatMap((r) => r.candidates.map((c) => c.id));
  const indexed = batch.ids.filter((id): id is number => id !== null);
  const known = await margins.ofIds([...indexed, ...candidateIds], load);
  // Query sentences that are not in the index are scored with their batch (fixed by the cursor).
  const external = batch.ids.some((id) => id === null)
    ? await margins.ofVectors(batch.vectors, batch.ids)
    : [];
  const queryMeans = batch.ids.map((id, q) =>
    id === null ? (external[q] as number) : (known.get(id) as number),
  );
  const out = new Map<number, Map<number, number>>();
  results.forEach((r, q) => {
    const row = new Map<number, number>();
    for (const c of r.candidates) {
      row.set(c.id, ratioMargin(c.cosine, queryMeans[q] as number, known.get(c.id) as number));
    }
    out.set(q, row);
  });
  return out;
}

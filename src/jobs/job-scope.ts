/**
 * A job's scope (withinGroup, window, document pairs) as the searcher that keeps its pairs inside it. A
 * document-pairs scope without a pairs file aligns the documents first, the job's first stage: at 10^6
 * documents that is minutes, so its progress goes into the job's record (`stage`) as it runs.
 */
import { type Alignment, alignDocuments, partnersOf, readDocPairs } from './align.js';
import type { AlignHooks } from './align-pairs.js';
import { groupsOf, type JobContext, sourceParts } from './job-context.js';
import { resolveDataPath } from './queries.js';
import { DEFAULT_EXACT_MAX, hasScope, ScopedSearch, type SelectiveIndex } from './scoped.js';
import { effectiveScope, type JobSpec } from './spec.js';
import type { JobRecord, JobStore } from './store.js';

/** Progress of a stage before mining: its name, units done and in all. */
export type StageReport = (name: string, done: number, total: number) => void;

/** Writes a running job's stage into its record, at most once a second (and its last report). */
export function stageWriter(jobs: JobStore, job: JobRecord): { report: StageReport; flush(): Promise<void> } {
  let last = 0;
  let pending: Promise<void> = Promise.resolve();
  const startedAt = job.startedAt ?? new Date().toISOString();
  return {
    report: (name, done, total) => {
      const now = Date.now();
      if (now - last < 1000 && done < total) return;
      last = now;
      const record: JobRecord = { ...job, state: 'running', startedAt, stage: { name, done, total } };
      pending = pending.then(() => jobs.put(record));
    },
    flush: () => pending,
  };
}

/** Each document's partners: from the pairs file, or aligned now (the job's first stage). */
async function docPartners(
  ctx: JobContext,
  spec: JobSpec & { docPairs: NonNullable<JobSpec['docPairs']> },
  report?: StageReport,
  work?: string,
): Promise<Map<string, string[]>> {
  const d = spec.docPairs;
  if (d.path !== undefined) return readDocPairs(resolveDataPath(d.path, ctx.dataDir, 'docPairs.path'));
  const onProgress =
    report && ((stage: string, done: number, total: number) => report(`align: ${stage}`, done, total));
  return partnersOf((await alignJobDocuments(ctx, spec, { onProgress, work })).pairs);
}

/**
 * The document pairs a job's document-pairs scope aligns, over the job's view of the index (its writes
 * included); `hooks.distribute` puts the search on a queue's workers (queue/mine.ts).
 */
export function alignJobDocuments(
  ctx: JobContext,
  spec: JobSpec & { docPairs: NonNullable<JobSpec['docPairs']> },
  hooks: AlignHooks,
): Promise<Alignment> {
  const d = spec.docPairs;
  const groups = groupsOf(ctx, sourceParts(ctx, spec).ntotal);
  const parts = { store: ctx.store, groups, vectors: ctx.vectors, added: ctx.added };
  return alignDocuments(parts, { ...d.align, docKey: d.docKey }, hooks);
}

/**
 * The scope's searcher when the job has a withinGroup, window or document-pairs scope. `work`: where an
 * alignment keeps its work, read back when the job resumes after a crash (align-checkpoint.ts).
 */
export async function scopedSearch(
  ctx: JobContext,
  spec: JobSpec,
  report?: StageReport,
  work?: string,
): Promise<ScopedSearch | undefined> {
  const ntotal = sourceParts(ctx, spec).ntotal;
  const docPairs = spec.docPairs && {
    key: spec.docPairs.docKey,
    partners: await docPartners(ctx, { ...spec, docPairs: spec.docPairs }, report, work),
  };
  const scope = { ...effectiveScope(spec), exactMax: spec.exactMax ?? DEFAULT_EXACT_MAX, docPairs };
  if (!hasScope(scope)) return undefined;
  return new ScopedSearch(scope, {
    tables: groupsOf(ctx, ntotal),
    store: ctx.store,
    vectors: ctx.vectors,
    added: ctx.added,
    embed: (texts) => ctx.encoder.encode(texts),
    dim: ctx.core.dim,
    ann: ctx.ann as unknown as SelectiveIndex,
    nprobe: spec.nprobe,
    recall: spec.recall,
  });
}

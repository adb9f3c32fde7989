/**
 * `paramine mine --queue URL --work DIR`: a mining job split into ranges of query ids (whole batches of
 * the job's batchSize, so every batch is the one a single runner would run), one `mine` job a range run
 * by the workers; then merged here in range order: the first pair of each key kept (as one runner's
 * pair de-duplication keeps it), sequence numbers in that order, clusters as connected components in
 * that order. The output files are those `paramine mine` writes, pair for pair.
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFileAtomicSync } from '../durable.js';
import { isParamineError, ParamineError } from '../errors.js';
import { readManifest } from '../index/index.js';
import {
  alignJobDocuments,
  type JobRecord,
  type JobRunner,
  type JobSpec,
  type JobSpecInput,
  type JobStore,
  jobSpecSchema,
  type MinedPair,
  UnionFind,
} from '../jobs/index.js';
import { SentenceStore, STORE_DIR } from '../store/index.js';
import { parseInput } from '../validate.js';
import { type AlignOnceOptions, alignOnce, type JobAlignment } from './align.js';
import { runStageAt, type StageJob } from './dispatch.js';
import { layout, readChecked, readMarker } from './layout.js';

export interface DistributedMineOptions {
  index: string;
  out: string;
  queue: string;
  work: string;
  spec: JobSpecInput;
  reranker?: string | false | undefined;
  /** Query sentences per range job (rounded to whole batches). */
  rangeSize: number;
  quiet: boolean;
  pollMs?: number;
  /** Where the job's files are (`--doc-pairs`): every worker reads them there. */
  dataDir?: string | undefined;
}

export interface DistributedMineSummary {
  job: string;
  ranges: number;
  queries: number;
  pairs: number;
  clusters?: number;
  clustersFile?: string;
}

/** Ranges of [start, end) of whole batches, about `size` queries each. */
export function mineRanges(
  start: number,
  end: number,
  batch: number,
  size: number,
): { start: number; end: number }[] {
  const step = Math.max(batch, Math.round(size / batch) * batch);
  const out: { start: number; end: number }[] = [];
  for (let s = start; s < end; s += step) out.push({ start: s, end: Math.min(end, s + step) });
  return out;
}

interface Dispatched {
  work: string;
  job: string;
  ranges: { start: number; end: number }[];
}

/** Splits the job into range jobs, queues them and waits until every range is published. */
async function dispatchRanges(
  o: Omit<DistributedMineOptions, 'out' | 'spec' | 'quiet'> & {
    quiet: boolean;
    spec: unknown;
    salt: string;
    stop?: () => boolean;
    onPoll?: (d: Dispatched) => Promise<void>;
    align?: JobAlignment;
  },
  log: (line: string) => void,
): Promise<Dispatched> {
  const spec = splittable(parseInput(jobSpecSchema, o.spec, 'job'));
  const index = resolve(o.index);
  const manifest = await readManifest(index);
  const n = manifest.shards.reduce((a, s) => a + s.count, 0);
  const [start, end] = spec.scope.kind === 'range' ? [spec.scope.start, Math.min(spec.scope.end, n)] : [0, n];
  const work = resolve(o.work);
  const ranges = mineRanges(start, end, spec.batchSize, o.rangeSize);
  // The same job over the same index in the same work dir has the same id: a restart finds its ranges.
  const job = createHash('sha256')
    .update(JSON.stringify([o.salt, work, index, manifest, spec, o.reranker ?? false, ranges]))
    .digest('hex')
    .slice(0, 16);
  const dispatched: Dispatched = { work, job, ranges };
  const onPoll = o.onPoll;
  mkdirSync(layout.mineDir(work, job), { recursive: true });
  const { index: _name, ...rangeSpec } = spec;
  const files = await rangeFiles(o, spec, index, layout.mineDir(work, job), log).catch((e: unknown) => {
    if (o.stop?.() === true && isParamineError(e) && e.code === 'ABORTED') return undefined;
    throw e;
  });
  // Stopped while its documents were aligned: no range ran (the caller sees the job stopped).
  if (files === undefined) return dispatched;
  const jobs: StageJob[] = ranges.map((r, i) => ({
    id: `${job}-mine-${i}`,
    name: `queries ${r.start}..${r.end - 1}`,
    data: {
      work,
      job,
      range: i,
      index,
      ...(o.reranker === undefined ? {} : { reranker: o.reranker }),
      ...(files.dataDir === undefined ? {} : { dataDir: files.dataDir }),
      spec: {
        ...rangeSpec,
        ...files.spec,
        scope: { kind: 'range', start: r.start, end: r.end },
        cluster: false,
      },
    },
    done: () => readMarker(layout.range(work, job, i)) !== undefined,
  }));
  await runStageAt(
    o.queue,
    {
      stage: 'mine',
      onFailed: 'stop',
      quiet: o.quiet,
      log,
      ...(o.pollMs ? { pollMs: o.pollMs } : {}),
      ...(o.stop ? { stop: o.stop } : {}),
      ...(onPoll ? { onPoll: () => onPoll(dispatched) } : {}),
    },
    jobs,
  );
  return dispatched;
}

/** The job, when its scope is ranges of index ids (the whole index or a range). */
function splittable(spec: JobSpec): JobSpec & { scope: { kind: 'all' | 'range' } } {
  if (spec.scope.kind === 'all' || spec.scope.kind === 'range') return { ...spec, scope: spec.scope };
  throw new ParamineError(
    'BAD_INPUT',
    'a distributed mining job splits ranges of index ids: use the whole index or a range (a query file runs on one machine)',
    { field: 'scope' },
  );
}

/**
 * What every range reads beside the index: a job's document pairs, aligned once here (the search on the
 * workers) when it aligns them, else its `--doc-pairs` file, from a directory every worker mounts.
 */
async function rangeFiles(
  o: AlignOnceOptions & { dataDir?: string | undefined },
  spec: JobSpec,
  index: string,
  dir: string,
  log: (line: string) => void,
): Promise<{ dataDir?: string; spec?: Pick<JobSpec, 'docPairs'> }> {
  const docPairs = spec.docPairs;
  if (docPairs !== undefined && docPairs.path === undefined) {
    const aligned = await alignOnce({ ...o, index, docPairs, dir }, log);
    return { dataDir: aligned.dataDir, spec: { docPairs: aligned.docPairs } };
  }
  return o.dataDir === undefined ? {} : { dataDir: resolve(o.dataDir) };
}

/** The pairs of range r, each with its key, in the runner's order (checked against the marker). */
function* rangePairs(work: string, job: string, r: number): Generator<{ k: string; p: MinedPair }> {
  const base = layout.range(work, job, r);
  const marker = readMarker(base);
  if (!marker) throw new ParamineError('CONFLICT', `mining range ${r} of job ${job} has no published output`);
  for (const line of readChecked(base, 'pairs', marker).toString('utf8').split('\n')) {
    if (line !== '') yield JSON.parse(line) as { k: string; p: MinedPair };
  }
}

export async function mineDistributed(
  o: DistributedMineOptions,
  log: (line: string) => void = () => {},
): Promise<DistributedMineSummary> {
  const spec = parseInput(jobSpecSchema, o.spec, 'job');
  const d = await dispatchRanges({ ...o, salt: 'cli' }, log);
  const queries = d.ranges.reduce((a, r) => a + r.end - r.start, 0);
  return merge(d.work, d.job, d.ranges.length, { ...o, index: resolve(o.index) }, spec.cluster, queries);
}

/**
 * The runner of a job manager (POST /v1/jobs on a service started with --queue): the job's ranges run on
 * the queue's workers, then each range's new pairs are committed to the job store in order (one batch a
 * range, so a restarted service goes on after the last merged range), clusters last.
 */
export function queueJobRunner(o: {
  queue: string;
  work: string;
  index: string;
  reranker?: string | false | undefined;
  rangeSize: number;
  dataDir?: string | undefined;
}): JobRunner {
  return async (initial, ctx, store, control) => {
    let job: JobRecord = {
      ...initial,
      state: 'running',
      startedAt: initial.startedAt ?? new Date().toISOString(),
    };
    await store.put(job);
    const t0 = performance.now();
    const runMs0 = job.runMs;
    // Commits the ranges published so far, in order (the next one not published ends it): progress shows
    // while workers run, and a restarted service goes on after the last committed range.
    const commitDone = async (d: Dispatched) => {
      let done = 0;
      for (const [r, range] of d.ranges.entries()) {
        done += range.end - range.start;
        if (done <= job.processed) continue;
        if (readMarker(layout.range(d.work, d.job, r)) === undefined) return;
        const batch = new Map<string, MinedPair>();
        for (const { k, p } of rangePairs(d.work, d.job, r))
          if (!batch.has(k) && !store.hasPair(job.id, k)) batch.set(k, p);
        const next: JobRecord = {
          ...job,
          processed: done,
          pairs: job.pairs + batch.size,
          runMs: runMs0 + performance.now() - t0,
        };
        await store.commitBatch(
          job,
          [...batch].map(([key, pair]) => ({ key, pair })),
          next,
        );
        job = next;
      }
    };
    const d = await dispatchRanges(
      {
        ...o,
        spec: initial.spec,
        quiet: true,
        salt: initial.id,
        stop: () => control.stop() !== undefined,
        onPoll: commitDone,
        // The service's view of its index (its writes included), as a job on one machine aligns.
        align: (docPairs, hooks) => alignJobDocuments(ctx, { ...job.spec, docPairs }, hooks),
      },
      () => {},
    );
    await commitDone(d);
    const total = d.ranges.reduce((a, r) => a + r.end - r.start, 0);
    if (job.processed < total) {
      // Stopped before every range was done: cancelled, or paused (it resumes on the next start).
      const stop = control.stop();
      if (stop === 'cancel') return finishJob(store, job, 'cancelled');
      if (stop === 'pause') return job;
      throw new ParamineError(
        'INTERNAL',
        `mining ranges of job ${job.id} ended with ${total - job.processed} queries not done`,
      );
    }
    if (job.spec.cluster) {
      const uf = new UnionFind();
      for (const { pair } of store.pairs(job.id))
        if (pair.a.id !== null && pair.b.id !== null) uf.union(pair.a.id, pair.b.id);
      const clusters = uf.clusters();
      job = { ...job, clusters: clusters.length };
      await store.writeClusters(job, clusters);
    }
    return finishJob(store, job, 'done');
  };
}

async function finishJob(store: JobStore, job: JobRecord, state: 'done' | 'cancelled'): Promise<JobRecord> {
  const done: JobRecord = { ...job, state, finishedAt: new Date().toISOString() };
  await store.put(done);
  return done;
}

async function merge(
  work: string,
  job: string,
  ranges: number,
  o: DistributedMineOptions,
  cluster: boolean,
  queries: number,
): Promise<DistributedMineSummary> {
  const seen = new Set<string>();
  const lines: string[] = [];
  const uf = new UnionFind();
  for (let r = 0; r < ranges; r++) {
    for (const { k, p } of rangePairs(work, job, r)) {
      if (seen.has(k)) continue;
      seen.add(k);
      lines.push(`${JSON.stringify({ seq: lines.length, ...p })}\n`);
      if (cluster && p.a.id !== null && p.b.id !== null) uf.union(p.a.id, p.b.id);
    }
  }
  writeFileAtomicSync(o.out, Buffer.from(lines.join('')));
  const summary: DistributedMineSummary = { job, ranges, queries, pairs: lines.length };
  if (!cluster) return summary;
  const clusters = uf.clusters();
  const clustersFile = `${o.out.replace(/\.jsonl?$/, '')}.clusters.jsonl`;
  const store = SentenceStore.open(join(o.index, STORE_DIR), { readOnly: true });
  try {
    const out = clusters.map(
      (ids, seq) => `${JSON.stringify({ seq, ids, texts: ids.map((id) => store.get(id)?.text) })}\n`,
    );
    writeFileAtomicSync(clustersFile, Buffer.from(out.join('')));
  } finally {
    await store.close();
  }
  return { ...summary, clusters: clusters.length, clustersFile };
}

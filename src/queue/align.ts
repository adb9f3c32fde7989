/**
 * `paramine docs align --queue URL --work DIR`: the document alignment's search, the bulk of its time at
 * 10^6 documents (docs/benchmarks/documents.md), split over the queue's workers. The coordinator reads the
 * documents, trains and fills the document index and keeps it in the shared work directory (the
 * checkpoint a single run keeps, align-checkpoint.ts); each `align` job is a share of whole search batches,
 * which a worker searches with that index and keeps there, batch file by batch file; the coordinator then
 * reads every batch back and chooses the band and the pairs as a single run does, so the output is the
 * single run's. A job is idempotent (batches already kept are read, not searched), and a worker that sees
 * other documents than the coordinator (the index changed meanwhile) is refused by the fingerprint. A
 * mining job whose scope aligns its documents (mine.ts) aligns them this way once (alignOnce), and every
 * range reads the pairs it wrote.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { writeFileAtomicSync } from '../durable.js';
import { ParamineError } from '../errors.js';
import type { Alignment, AlignOptionsInput, AlignShare, SharePlan } from '../jobs/align.js';
import { clearCheckpoint } from '../jobs/align-checkpoint.js';
import { alignIndexDir, indexDirShare } from '../jobs/align-index.js';
import type { AlignHooks } from '../jobs/align-pairs.js';
import type { JobSpec } from '../jobs/index.js';
import { setNumThreads } from '../native/index.js';
import { runStageAt, type StageJob } from './dispatch.js';
import { DEFAULT_SHARE_SIZE } from './options.js';

export interface DistributedAlignOptions {
  queue: string;
  work: string;
  index: string;
  options: AlignOptionsInput;
  /** Documents per `align` job (rounded to whole search batches). */
  shareSize: number;
  quiet: boolean;
  pollMs?: number | undefined;
  log?: (line: string) => void;
  /** Checked every poll: true stops waiting (the shares not started leave the queue) and fails with ABORTED. */
  stop?: () => boolean;
}

/** The shares of a plan: [from, to) of whole batches, about `size` documents each. */
export function alignShares(plan: SharePlan, size: number): { from: number; to: number }[] {
  const step = Math.max(1, Math.round(size / plan.batch)) * plan.batch;
  const out: { from: number; to: number }[] = [];
  for (let from = 0; from < plan.count; from += step)
    out.push({ from, to: Math.min(plan.count, from + step) });
  return out;
}

/** The coordinator's `distribute` hook (AlignHooks): queues the shares not done and waits for them all. */
export function distributeAlignment(o: DistributedAlignOptions): (plan: SharePlan) => Promise<void> {
  return async (plan) => {
    const work = resolve(o.work);
    const index = resolve(o.index);
    // The same documents and options in the same work directory: the same jobs (a restart finds them).
    const run = createHash('sha256').update(`${plan.fingerprint}\n${work}`).digest('hex').slice(0, 16);
    const batchesDone = (from: number, to: number) => {
      for (let b = from; b < to; b += plan.batch) if (!plan.done(b)) return false;
      return true;
    };
    const jobs: StageJob[] = alignShares(plan, o.shareSize).map((s, i) => ({
      id: `${run}-align-${i}`,
      name: `documents ${s.from}..${s.to - 1}`,
      data: { work, index, options: o.options, fingerprint: plan.fingerprint, from: s.from, to: s.to },
      done: () => batchesDone(s.from, s.to),
    }));
    await runStageAt(
      o.queue,
      {
        stage: 'align',
        onFailed: 'stop',
        quiet: o.quiet,
        log: o.log ?? (() => {}),
        ...(o.pollMs === undefined ? {} : { pollMs: o.pollMs }),
        ...(o.stop === undefined ? {} : { stop: o.stop }),
      },
      jobs,
    );
    // Not done: the coordinator must not search the rest itself.
    if (o.stop?.() === true) throw new ParamineError('ABORTED', 'stopped while the documents were aligned');
  };
}

export const alignDataSchema = z.object({
  work: z.string().min(1),
  index: z.string().min(1),
  options: z.record(z.string(), z.unknown()),
  fingerprint: z.string().min(1),
  from: z.number().int().min(0),
  to: z.number().int().min(1),
});

/**
 * A worker's prepared documents, kept for the next share of the same run: reading and counting 10^6
 * documents' n-grams and reading the index take a minute or more, a share's search a few. A share of
 * another run closes the prepared runs no job is searching (with --concurrency > 1, one may still be).
 */
export class AlignRunner {
  readonly #runs = new Map<string, Run>();
  constructor(private readonly threads: number) {}

  async search(d: z.output<typeof alignDataSchema>): Promise<void> {
    const key = `${d.index}\n${d.work}\n${d.fingerprint}`;
    let run = this.#runs.get(key);
    if (run === undefined) {
      // In the map before any await: a second job of this run (--concurrency > 1) waits for the same one.
      const idle = this.#idle();
      const share = (async () => {
        await Promise.all(idle.map(close));
        setNumThreads(this.threads, this.threads);
        return indexDirShare(d.index, d.options as AlignOptionsInput, d.work);
      })();
      run = { share, searching: 0 };
      this.#runs.set(key, run);
      share.catch(() => this.#runs.delete(key));
    }
    run.searching++;
    try {
      await (await run.share).search(d.from, d.to);
    } finally {
      run.searching--;
    }
  }

  async close(): Promise<void> {
    const runs = [...this.#runs.values()];
    this.#runs.clear();
    await Promise.all(runs.map(close));
  }

  /** The runs no job is searching, taken out of the map (the caller closes them). */
  #idle(): Run[] {
    const out: Run[] = [];
    for (const [key, run] of [...this.#runs]) {
      if (run.searching > 0) continue;
      this.#runs.delete(key);
      out.push(run);
    }
    return out;
  }
}

interface Run {
  share: Promise<AlignShare>;
  /** Jobs searching with it now. */
  searching: number;
}

const close = async (run: Run): Promise<void> => (await run.share.catch(() => undefined))?.close();

export async function runAlignShare(input: unknown, runner: AlignRunner): Promise<{ documents: number }> {
  const d = alignDataSchema.parse(input);
  await runner.search(d);
  return { documents: d.to - d.from };
}

/** The aligned document pairs of a job, written once in its directory and read by every range. */
const DOC_PAIRS = 'doc-pairs.jsonl';

/** A job's alignment: over the index directory (`mine --queue`) or the service's view of it (POST /v1/jobs). */
export type JobAlignment = (docPairs: DocPairsSpec, hooks: AlignHooks) => Promise<Alignment>;
type DocPairsSpec = NonNullable<JobSpec['docPairs']>;

export interface AlignOnceOptions {
  queue: string;
  quiet: boolean;
  pollMs?: number | undefined;
  stop?: () => boolean;
  /** How the job aligns its documents (default: over the index directory). */
  align?: JobAlignment | undefined;
}

/**
 * A job whose scope aligns documents aligns them once, here, the search on the workers (`align` jobs);
 * each range then reads the pairs from the job's directory, instead of every range aligning them all again.
 */
export async function alignOnce(
  o: AlignOnceOptions & { index: string; docPairs: DocPairsSpec; dir: string },
  log: (line: string) => void,
): Promise<{ dataDir: string; docPairs: { docKey: string; path: string } }> {
  const file = join(o.dir, DOC_PAIRS);
  if (!existsSync(file)) {
    const work = join(o.dir, 'align');
    const d = o.docPairs;
    const options = { ...d.align, docKey: d.docKey };
    const distribute = distributeAlignment({
      queue: o.queue,
      work,
      index: o.index,
      options,
      shareSize: DEFAULT_SHARE_SIZE,
      quiet: o.quiet,
      pollMs: o.pollMs,
      log,
      ...(o.stop === undefined ? {} : { stop: o.stop }),
    });
    const align = o.align ?? ((_d, hooks) => alignIndexDir(o.index, options, hooks));
    const { pairs } = await align(d, { work, distribute });
    writeFileAtomicSync(file, Buffer.from(pairs.map((p) => `${JSON.stringify(p)}\n`).join('')));
    await clearCheckpoint(work);
  }
  return { dataDir: o.dir, docPairs: { docKey: o.docPairs.docKey, path: DOC_PAIRS } };
}

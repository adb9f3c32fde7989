/**
 * The `mine` stage: one range of query ids of a distributed mining job, run by the same job runner as
 * `paramine mine` and POST /v1/jobs (src/jobs over the service's search + rerank core) against the
 * index, which every worker opens from the shared path (memory-mapped when large). The range's pairs,
 * each with its dedup key, in the runner's order, are published as DIR/mine/JOB/r-NNNNNN.pairs; the
 * coordinator merges the ranges in order, keeping the first pair of each key, as one runner would.
 */
import { rmSync } from 'node:fs';
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import { type JobSpecInput, type MinedPair, pairKey } from '../jobs/index.js';
import { setNumThreads } from '../native/index.js';
import { openService, type Service } from '../service/index.js';
import { dedupKey } from '../text/index.js';
import { layout, publish, readMarker } from './layout.js';

export const mineDataSchema = z.object({
  work: z.string().min(1),
  job: z.string().regex(/^[a-z0-9]+$/),
  range: z.number().int().min(0),
  index: z.string().min(1),
  reranker: z.union([z.string(), z.literal(false)]).optional(),
  /** Where the job's files are (its aligned document pairs: mine.ts). */
  dataDir: z.string().min(1).optional(),
  spec: z.record(z.string(), z.unknown()),
});
export type MineData = z.infer<typeof mineDataSchema>;

/** The key one runner dedups a pair by: index ids when the query has one, else its dedup key. */
export function keyOfPair(p: MinedPair): string {
  return p.a.id === null ? `q:${dedupKey(p.a.text)}:${p.b.id}` : pairKey(p.a.id, p.b.id as number);
}

/** A worker's open services, one per index (and cross-encoder), shared by its mining jobs. */
export class MineRunner {
  private services = new Map<string, Promise<Service>>();
  constructor(private readonly threads: number) {}

  service(index: string, reranker: string | false | undefined): Promise<Service> {
    const key = `${index}\n${String(reranker)}`;
    let s = this.services.get(key);
    if (!s) {
      setNumThreads(this.threads, this.threads);
      // undefined: the default cross-encoder when present, as the service that queued the job has.
      s = openService({ index, reranker, batch: { maxBatch: 256, maxWaitMs: 0 } });
      s.catch(() => this.services.delete(key));
      this.services.set(key, s);
    }
    return s;
  }

  async close(): Promise<void> {
    for (const s of this.services.values()) await (await s.catch(() => undefined))?.close();
    this.services.clear();
  }
}

export async function runMineRange(
  input: unknown,
  runner: MineRunner,
): Promise<{ queries: number; pairs: number }> {
  const d = mineDataSchema.parse(input);
  const base = layout.range(d.work, d.job, d.range);
  const done = readMarker(base);
  if (done) return done.info as { queries: number; pairs: number };
  const service = await runner.service(d.index, d.reranker);
  // The runner's own state for this range: private to this attempt, removed after.
  const dir = `${base}.state-${process.pid}`;
  rmSync(dir, { recursive: true, force: true });
  const { manager, store } = service.openJobs({ dir, dataDir: d.dataDir });
  try {
    const job = await manager.create(d.spec as JobSpecInput);
    const end = await manager.wait(job.id, undefined, 50);
    if (end.state !== 'done') {
      const why = end.error ? `${end.error.code}: ${end.error.message}` : end.state;
      throw new ParamineError('INTERNAL', `mining range ${d.range} of job ${d.job}: ${why}`);
    }
    const lines: string[] = [];
    for (const { pair } of store.pairs(job.id))
      lines.push(`${JSON.stringify({ k: keyOfPair(pair), p: pair })}\n`);
    const info = { queries: end.total, pairs: lines.length };
    publish(base, { pairs: Buffer.from(lines.join('')) }, info);
    return info;
  } finally {
    await manager.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

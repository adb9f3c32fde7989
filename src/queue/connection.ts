/**
 * Where the queue lives: `redis://[:PASSWORD@]HOST:PORT/DB` parsed once (zod), the stage queue names, and
 * the job options every stage shares (retries with exponential backoff, kept results for resume).
 */
import { z } from 'zod';
import { ParamineError } from '../errors.js';

export interface RedisTarget {
  host: string;
  port: number;
  db: number;
  password?: string;
  /** Key prefix of every queue (several clusters may share one Redis). */
  prefix: string;
}

const urlSchema = z
  .string()
  .min(1)
  .transform((text, ctx) => {
    let u: URL;
    try {
      u = new URL(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: `"${text}" is not a URL (redis://HOST:PORT/DB)` });
      return z.NEVER;
    }
    if (u.protocol !== 'redis:') {
      ctx.addIssue({ code: 'custom', message: `"${text}": only redis:// URLs are supported` });
      return z.NEVER;
    }
    const port = u.port === '' ? 6379 : Number(u.port);
    const dbText = u.pathname.replace(/^\//, '');
    const db = dbText === '' ? 0 : Number(dbText);
    if (!Number.isInteger(db) || db < 0 || db > 15) {
      ctx.addIssue({
        code: 'custom',
        message: `"${text}": the database must be 0..15 (redis://HOST:PORT/DB)`,
      });
      return z.NEVER;
    }
    const prefix = u.searchParams.get('prefix') ?? 'paramine';
    const target: RedisTarget = { host: u.hostname || '127.0.0.1', port, db, prefix };
    if (u.password !== '') target.password = decodeURIComponent(u.password);
    return target;
  });

/** Parses a --queue URL; a bad one is a BAD_INPUT naming the option. */
export function parseQueueUrl(text: string, field = 'queue'): RedisTarget {
  const r = urlSchema.safeParse(text);
  if (!r.success) {
    throw new ParamineError('BAD_INPUT', r.error.issues.map((i) => i.message).join('; '), { field });
  }
  return r.data;
}

/** ioredis options for BullMQ (workers must not give up on a command while Redis restarts). */
export function connectionOptions(t: RedisTarget) {
  return {
    host: t.host,
    port: t.port,
    db: t.db,
    ...(t.password === undefined ? {} : { password: t.password }),
    maxRetriesPerRequest: null,
  };
}

/**
 * The stages, one BullMQ queue each: depth and rates are per stage (`add`: a serving index's writes,
 * add.ts; `align`: shares of a document alignment's search, align.ts).
 */
export const STAGES = ['embed', 'dedup', 'fill', 'mine', 'add', 'align'] as const;
export type Stage = (typeof STAGES)[number];

export function queueName(stage: Stage): string {
  return `paramine-${stage}`;
}

/** Attempts of a job before it fails for good, and the first backoff (doubling). */
export const ATTEMPTS = 3;
export const BACKOFF_MS = 1000;

/** Options of every job: results are kept (a resumed coordinator reads job states). */
export const JOB_OPTIONS = {
  attempts: ATTEMPTS,
  backoff: { type: 'exponential', delay: BACKOFF_MS },
  removeOnComplete: { age: 7 * 24 * 3600 },
  removeOnFail: { age: 7 * 24 * 3600 },
} as const;

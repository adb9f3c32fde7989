/**
 * Mining jobs over HTTP: start, list, inspect, cancel, and stream results and clusters as NDJSON from an
 * offset (a client that lost its connection resumes where it stopped; `follow` keeps streaming until the
 * job ends). Thin adapters over the JobManager. Reading is a read route; starting and cancelling need a key
 * whenever one is configured.
 */
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import { ParamineError } from '../../errors.js';
import { FINISHED } from '../../jobs/index.js';
import { reviewOrder } from '../../jobs/review.js';
import { pairDiff } from '../../text/index.js';
import { parseInput } from '../../validate.js';
import type { RoutePlugin } from '../context.js';
import { jobIdParams, resultsQuery, reviewQuery, streamQuery } from '../contract/requests.js';

type StreamQuery = z.output<typeof streamQuery> & { diff?: boolean; context?: number };

/** A stream's lines from one read, and how many stored records that read went through. */
interface Chunk {
  lines: string[];
  read: number;
}

/** How often a following stream looks for new pairs. */
const FOLLOW_POLL_MS = 250;

export const jobRoutes: RoutePlugin = async (app, { ctx, auth }) => {
  if (ctx.jobs === undefined) throw new ParamineError('BAD_CONFIG', 'job routes need a job manager');
  const { manager, store: jobs } = ctx.jobs;
  app.addHook('onRequest', auth.require('read'));
  const write = { onRequest: auth.require('write') };

  app.post('/v1/jobs', write, async (req, reply) => {
    const job = await manager.create(req.body ?? {});
    return reply.code(202).header('location', `/v1/jobs/${job.id}`).send(manager.get(job.id));
  });

  app.get('/v1/jobs', async () => ({ jobs: manager.list() }));

  app.get('/v1/jobs/:id', async (req) => manager.get(parseInput(jobIdParams, req.params, 'id').id));

  app.delete('/v1/jobs/:id', write, async (req) =>
    manager.cancel(parseInput(jobIdParams, req.params, 'id').id),
  );

  /** An NDJSON stream of one job's records from `offset` (see follow below). */
  const ndjson = (
    path: string,
    query: typeof streamQuery | typeof resultsQuery,
    read: (id: string, from: number, max: number, q: StreamQuery) => Chunk,
  ) =>
    app.get(path, { config: { stream: true } }, async (req, reply) => {
      const { id } = parseInput(jobIdParams, req.params, 'id');
      const q: StreamQuery = parseInput(query, req.query, 'query');
      manager.get(id);
      const lines = follow(q, id, (from, max) => read(id, from, max, q));
      return reply.type('application/x-ndjson').send(Readable.from(lines));
    });
  const { store } = ctx.service;
  /** A sentence deleted since the job ran (DELETE /v1/sentences) leaves its pairs out of the results. */
  const gone = (s: { id: number | null }) => s.id !== null && store.isDeleted(s.id);
  reviewRoute(app, ctx, gone);
  ndjson('/v1/jobs/:id/results', resultsQuery, (id, from, max, q) => {
    const rows = [...jobs.pairs(id, from, max)];
    const lines = rows
      .filter(({ pair }) => !gone(pair.a) && !gone(pair.b))
      .map(({ seq, pair }) => {
        const diff = q.diff ? { diff: pairDiff(pair.a.text, pair.b.text) } : {};
        const n = q.context ?? 0;
        const side = (s: typeof pair.a) => {
          const around = n > 0 && s.id !== null ? ctx.service.context(s.id, n) : undefined;
          return around ? { ...s, context: around } : s;
        };
        return `${JSON.stringify({ seq, ...pair, a: side(pair.a), b: side(pair.b), ...diff })}\n`;
      });
    return { lines, read: rows.length };
  });
  ndjson('/v1/jobs/:id/clusters', streamQuery, (id, from, max) => {
    const lines = [...jobs.clusters(id, from, max)].map(
      ({ seq, ids }) => `${JSON.stringify({ seq, ids })}\n`,
    );
    return { lines, read: lines.length };
  });

  /** Lines from the offset; with follow, keeps reading until the job has finished and all is sent. */
  async function* follow(
    q: StreamQuery,
    id: string,
    read: (from: number, max: number) => Chunk,
  ): AsyncGenerator<string> {
    let from = q.offset;
    let left = q.limit ?? Number.MAX_SAFE_INTEGER;
    for (;;) {
      const finished = FINISHED.includes(manager.get(id).state);
      const chunk = read(from, Math.min(left, 1000));
      for (const line of chunk.lines) yield line;
      // Offsets and limits count stored records, so a resumed stream lines up whatever was left out.
      from += chunk.read;
      left -= chunk.read;
      if (left === 0) return;
      if (chunk.read === 1000) continue;
      if (!q.follow || finished || manager.closed) return;
      await sleep(FOLLOW_POLL_MS);
    }
  }
};

/** GET /v1/jobs/{id}/review: least sure labels first (jobs/review.ts), the annotations that move the cut most. */
function reviewRoute(
  app: Parameters<RoutePlugin>[0],
  ctx: Parameters<RoutePlugin>[1]['ctx'],
  gone: (s: { id: number | null }) => boolean,
): void {
  const { manager, store: jobs } = ctx.jobs as NonNullable<typeof ctx.jobs>;
  app.get('/v1/jobs/:id/review', async (req) => {
    const { id } = parseInput(jobIdParams, req.params, 'id');
    const q = parseInput(reviewQuery, req.query, 'query');
    manager.get(id);
    const { cuts, student } = ctx.service.labelCuts;
    const items = reviewOrder(
      (function* () {
        for (const row of jobs.pairs(id, 0, Number.MAX_SAFE_INTEGER)) {
          if (!gone(row.pair.a) && !gone(row.pair.b)) yield row;
        }
      })(),
      {
        offset: q.offset,
        limit: q.limit,
        cuts,
        defaultCut: student === undefined ? undefined : cuts[student],
        positiveLabels: ctx.service.core.positiveLabels,
        groupKey: q.group,
      },
    );
    return {
      cuts,
      ...(student === undefined ? {} : { student }),
      pairs: items.map(({ seq, pair, margin, cut }) => ({ seq, ...pair, margin, cut })),
    };
  });
}

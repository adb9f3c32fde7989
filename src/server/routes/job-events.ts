/**
 * GET /v1/jobs/{id}/events: a job's live progress as server-sent events. The job store announces every
 * write of a job's record (each checkpoint, each state change); the stream sends the manager's status
 * (processed, pairs, rate, ETA, state) at most every THROTTLE_MS, then `end` once the job has finished.
 */
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { ParamineError } from '../../errors.js';
import { FINISHED } from '../../jobs/index.js';
import { parseInput } from '../../validate.js';
import type { RoutePlugin } from '../context.js';
import { jobIdParams } from '../contract/requests.js';

/** A comment line this often keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;
const THROTTLE_MS = 200;

export const jobEventRoutes: RoutePlugin = async (app, { ctx, auth }) => {
  if (ctx.jobs === undefined) throw new ParamineError('BAD_CONFIG', 'job event routes need a job manager');
  const o = { manager: ctx.jobs.manager, jobs: ctx.jobs.store };
  app.addHook('onRequest', auth.require('read'));
  // Open streams end when the app starts closing, so shutting down does not wait for a heartbeat.
  const open = new Set<AbortController>();
  app.addHook('preClose', async () => {
    for (const c of open) c.abort();
  });

  async function* events(id: string, signal: AbortSignal): AsyncGenerator<string> {
    let dirty = true;
    const changed = new EventTarget();
    const onChange = (jobId: string) => {
      if (jobId !== id) return;
      dirty = true;
      changed.dispatchEvent(new Event('change'));
    };
    o.jobs.changes.on('job', onChange);
    try {
      yield 'retry: 2000\n\n';
      for (;;) {
        if (dirty) {
          dirty = false;
          const status = o.manager.get(id);
          yield `event: progress\ndata: ${JSON.stringify(status)}\n\n`;
          if (FINISHED.includes(status.state)) {
            yield 'event: end\ndata: {}\n\n';
            return;
          }
        }
        if (o.manager.closed) return;
        const wait = new AbortController();
        const stop = () => wait.abort();
        signal.addEventListener('abort', stop, { once: true });
        await Promise.race([
          once(changed, 'change', { signal: wait.signal }),
          sleep(HEARTBEAT_MS, undefined, { signal: wait.signal }),
        ]).catch(() => undefined);
        wait.abort();
        signal.removeEventListener('abort', stop);
        if (signal.aborted) return;
        if (!dirty) yield ': keep-alive\n\n';
        else await sleep(THROTTLE_MS);
      }
    } finally {
      o.jobs.changes.off('job', onChange);
    }
  }

  app.get('/v1/jobs/:id/events', { config: { stream: true } }, async (req, reply) => {
    const { id } = parseInput(jobIdParams, req.params, 'id');
    o.manager.get(id);
    const closed = new AbortController();
    open.add(closed);
    reply.raw.once('close', () => {
      closed.abort();
      open.delete(closed);
    });
    return reply
      .type('text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('x-accel-buffering', 'no')
      .send(Readable.from(events(id, closed.signal)));
  });
};

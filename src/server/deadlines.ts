/**
 * The handler timeout: a response not sent within `ms` of its request is a 503 TIMEOUT (Retry-After 1),
 * and one that started streaming is cut. Fastify's own `handlerTimeout` gives every request an
 * AbortController and a timer and aborts the controller when the request closes, building a DOMException
 * each time: ~35 us of the event loop a request, an eighth of what a refusal cost under 500 clients that
 * retry at once (docs/benchmarks/serve.md, 2026-12-03 fifth session). Here a request is one Map entry,
 * and a sweep a few times a second answers the late ones and forgets the answered ones.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A streaming route (NDJSON results, server-sent events, exports): no handler timeout, since it
     * streams as long as its job runs or its client reads; it ends with them instead.
     */
    stream?: boolean;
  }
}

/** Longest a late response waits past its deadline for the sweep. */
const SWEEP_MS = 250;

export function installDeadlines(app: FastifyInstance, ms: number): void {
  const due = new Map<FastifyReply, number>();
  app.addHook('onRequest', (req, reply, done) => {
    if (req.routeOptions.config.stream !== true) due.set(reply, performance.now() + ms);
    done();
  });
  const sweep = () => {
    const now = performance.now();
    for (const [reply, at] of due) {
      if (reply.sent) due.delete(reply);
      else if (at <= now) {
        due.delete(reply);
        timedOut(reply);
      }
    }
  };
  const timer = setInterval(sweep, Math.max(1, Math.min(SWEEP_MS, ms / 4)));
  timer.unref();
  app.addHook('onClose', (_app, done) => {
    clearInterval(timer);
    done();
  });
}

function timedOut(reply: FastifyReply): void {
  if (reply.raw.headersSent) {
    reply.raw.destroy();
    return;
  }
  reply.log.warn({ url: reply.request.url }, 'request timed out');
  void reply
    .code(503)
    .header('retry-after', '1')
    .send({ code: 'TIMEOUT', message: 'the request took too long; try again' });
}

/**
 * An AbortSignal that fires when the client disconnects before its response is written, so work still
 * queued for the models is dropped instead of computed for nobody.
 */
import type { FastifyReply } from 'fastify';

export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  // 'close' on the response: written and done, or the connection went away first.
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

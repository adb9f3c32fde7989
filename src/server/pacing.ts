/**
 * Refusals under overload: paced per connection, and written straight to the socket.
 *
 * Paced: a refusal is answered at once, then its connection's next request is read only after a pause
 * (50 ms, doubling while refusals continue within a second, up to `maxMs`), so clients that retry at once
 * (Retry-After ignored) do not turn overload into thousands of refusals a second that take the cores from
 * the requests being served (docs/benchmarks/serve.md, 2026-12-03 fifth session).
 *
 * Written straight: the 503 skips fastify's error path (error handler, serializer, onSend hooks); the
 * onResponse hooks (metrics) still run.
 */
import type { Socket } from 'node:net';
import type { FastifyReply } from 'fastify';
import type { ParamineError } from '../errors.js';

const FIRST_MS = 50;
const QUIET_MS = 1000;

/** A socket's own handle: libuv's stream, whose reads can stop while the connection stays open. */
type Handle = { readStop?: () => number; readStart?: () => number };
/** The socket's handle now (none once destroyed, or for an injected request's stand-in socket). */
const handleOf = (socket: Socket) => (socket as unknown as { _handle?: Handle | null })._handle;

export class RefusalPacer {
  readonly #recent = new WeakMap<Socket, { last: number; delay: number }>();
  readonly #maxMs: number;

  constructor(maxMs: number) {
    this.#maxMs = maxMs;
  }

  /** Answers `error` (OVERLOADED) at once, then reads nothing more from its connection for a while. */
  refuse(reply: FastifyReply, error: ParamineError): void {
    writeRefusal(reply, error);
    const socket = reply.raw.socket;
    if (socket !== null) this.#holdBack(socket);
  }

  /**
   * The connection's reads stop for the pause: its next request waits in the kernel's buffer, and the
   * process keeps nothing for it but a timer (before, the refusal itself was held for the pace).
   */
  #holdBack(socket: Socket): void {
    const delay = this.#nextDelay(socket);
    const handle = handleOf(socket);
    if (delay <= 0 || typeof handle?.readStop !== 'function') return;
    handle.readStop();
    setTimeout(() => {
      if (!socket.destroyed) handleOf(socket)?.readStart?.();
    }, delay).unref();
  }

  /** How long this connection waits before its next request is read: 50 ms, doubling up to the most. */
  #nextDelay(socket: Socket): number {
    if (this.#maxMs <= 0) return 0;
    const now = performance.now();
    const seen = this.#recent.get(socket);
    const delay =
      seen && now - seen.last < QUIET_MS
        ? Math.min(this.#maxMs, seen.delay * 2)
        : Math.min(this.#maxMs, FIRST_MS);
    this.#recent.set(socket, { last: now + delay, delay });
    return delay;
  }
}

/** The error's JSON as the error handler would send it, with its Retry-After. */
function writeRefusal(reply: FastifyReply, error: ParamineError): void {
  const res = reply.raw;
  if (res.destroyed || res.headersSent) return;
  const body = JSON.stringify(error.toJSON());
  res.writeHead(error.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'retry-after': String(error.retryAfterSeconds ?? 1),
  });
  res.end(body);
}

/**
 * Paced refusals: a connection refused a moment ago waits a little longer for its next 503 (50 ms, doubling
 * up to `maxMs`), so clients that retry at once (Retry-After ignored) do not turn overload into thousands of
 * refusals a second that take the event loop from the requests being served. A connection's first refusal,
 * or one after a quiet second, is answered at once.
 */
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const FIRST_MS = 50;
const QUIET_MS = 1000;

export class RefusalPacer {
  readonly #recent = new WeakMap<Socket, { last: number; delay: number }>();
  readonly #maxMs: number;

  constructor(maxMs: number) {
    this.#maxMs = maxMs;
  }

  /** Waits as long as this connection's recent refusals say, before it is refused again. */
  async pace(socket: Socket): Promise<void> {
    if (this.#maxMs <= 0) return;
    const now = performance.now();
    const seen = this.#recent.get(socket);
    const delay =
      seen && now - seen.last < QUIET_MS ? Math.min(this.#maxMs, Math.max(FIRST_MS, seen.delay * 2)) : 0;
    this.#recent.set(socket, { last: now + delay, delay });
    if (delay > 0) await sleep(delay);
  }
}

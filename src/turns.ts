/**
 * Long loops on the event loop's thread let it go every TURN_MS: a queue worker renews its jobs' locks on
 * a timer (every half --lock-ms; a lock not renewed in time is taken for a dead worker and the job runs
 * again), and a server answers its searches beside a job. Counted in time, not rows: a row's cost varies by
 * 100x between stages, and a loaded machine stretches a fixed slice of rows (two align jobs at once on one
 * worker held its loop 1.1-1.4 s with slices of rows, and lost their 2-s locks).
 */
import { setImmediate } from 'node:timers/promises';

/** The longest a loop holds the event loop between two turns. */
export const TURN_MS = 50;

export class Turns {
  #since = performance.now();

  constructor(private readonly ms = TURN_MS) {}

  /** Whether the loop is owed a turn: cheap enough to ask once a row. */
  get due(): boolean {
    return performance.now() - this.#since >= this.ms;
  }

  /** Lets the event loop go once (timers, I/O), then counts from now. */
  async pass(): Promise<void> {
    await setImmediate();
    this.#since = performance.now();
  }

  /** pass() if due: for loops whose rows cost more than an await. */
  async take(): Promise<void> {
    if (this.due) await this.pass();
  }
}

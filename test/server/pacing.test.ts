/** Paced refusals: at once the first time, then 50 ms doubling up to the cap while refusals keep coming. */
import type { Socket } from 'node:net';
import t from 'tap';
import { RefusalPacer } from '../../src/server/pacing.js';

const timed = async (f: () => Promise<void>) => {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
};

t.test(
  'a connection refused again soon waits longer, up to the cap; another connection does not',
  async (t) => {
    const pacer = new RefusalPacer(120);
    const a = {} as Socket;
    const b = {} as Socket;
    t.ok((await timed(() => pacer.pace(a))) < 20, 'first refusal at once');
    const waits = [];
    for (let i = 0; i < 4; i++) waits.push(await timed(() => pacer.pace(a)));
    t.ok((waits[0] as number) >= 45, `then 50 ms (${waits[0]})`);
    t.ok((waits[1] as number) >= 95, `then 100 ms (${waits[1]})`);
    t.ok((waits[3] as number) >= 115 && (waits[3] as number) < 250, `capped at 120 ms (${waits[3]})`);
    t.ok((await timed(() => pacer.pace(b))) < 20, 'another connection: at once');
    t.ok((await timed(() => new RefusalPacer(0).pace(a))) < 5, 'pacing off');
  },
);

/** Progress off a terminal (a log file, CI): lines at the interval, and the final one printed once. */
import { PassThrough } from 'node:stream';
import t from 'tap';
import { NEAREST_UNITS } from '../../src/jobs/align-search.js';
import { createProgress, stagedProgress } from '../../src/progress.js';

function capture() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d) => {
    text += d;
  });
  return { stream: Object.assign(stream, { isTTY: false }), text: () => text };
}

t.test('the final line once, whether or not the interval just printed it', async (t) => {
  const a = capture();
  const p = createProgress({ label: 'adding', unit: 'sentences', stream: a.stream as never, intervalMs: 0 });
  p.update(5, 10);
  p.update(10, 10);
  p.stop();
  const lines = a.text().trim().split('\n');
  t.equal(lines.length, 2, lines.join(' | '));
  t.match(lines[1], /10\/10 sentences/);

  const b = capture();
  const q = createProgress({
    label: 'adding',
    unit: 'sentences',
    stream: b.stream as never,
    intervalMs: 60_000,
  });
  q.update(5, 10);
  q.update(10, 10);
  q.stop();
  const more = b.text().trim().split('\n');
  t.same(more.length, 2, 'the first line, then the final one at stop');
  t.match(more[1], /10\/10 sentences/);
});

t.test('staged progress names each stage and what it counts', async (t) => {
  const a = capture();
  const p = stagedProgress('docs align', NEAREST_UNITS, false, a.stream as never);
  p.update('train', 1, 1);
  p.update('add', 10, 10);
  p.stop();
  const text = a.text();
  t.match(text, /docs align: train: 1\/1 k-means steps/);
  t.match(text, /docs align: add: 10\/10 documents/);
});

t.test("work read back from a run cut short is not counted in this run's rate", async (t) => {
  const a = capture();
  const p = stagedProgress('docs align', NEAREST_UNITS, false, a.stream as never);
  p.update('search', 16_384, 32_768, true);
  await new Promise((r) => setTimeout(r, 1100));
  p.update('search', 20_000, 32_768);
  p.stop();
  const lines = a.text().trim().split('\n');
  const rate = Number(/, (\d+)\/s/.exec(lines.at(-1) ?? '')?.[1]);
  // 3,616 documents in about a second, not 20,000 (nor 16,384 the instant the bar started).
  t.ok(rate > 1000 && rate < 4000, `${rate}/s: ${lines.join(' | ')}`);
  t.match(lines[0] ?? '', /16384\/32768 documents/, 'the read-back count is shown');
});

/**
 * Choosing an operating point (src/index/manifest.ts pickOperatingPoint): the cheapest reaching the recall
 * with 95% confidence; when none does, the cheapest the sample cannot tell from the most accurate.
 */
import t from 'tap';
import { type OperatingPoint, pickOperatingPoint } from '../../src/index/index.js';

const point = (nprobe: number, recall: number, p50Ms: number, recallStderr = 0.003): OperatingPoint => ({
  nprobe,
  kFactor: 16,
  recall,
  recallStderr,
  p50Ms,
  p99Ms: p50Ms * 2,
});

// The front the docs-scale lab's index measured (416,041 crowded sentences, IVF4096,PQ48).
const front = [
  point(256, 0.8881, 1.372, 0.00454),
  point(512, 0.9072, 2.213, 0.00389),
  point(1024, 0.9255, 4.681, 0.00329),
  point(2048, 0.9364, 8.322, 0.00294),
  point(4096, 0.94, 18.374, 0.00284),
];

t.test('the cheapest point reaching the recall with 95% confidence', async (t) => {
  t.equal(pickOperatingPoint(front, 0.9)?.nprobe, 512, '0.9072 - 1.645 x 0.00389 >= 0.9');
  t.equal(pickOperatingPoint(front, 0.905)?.nprobe, 1024, 'not 512 below its bound');
  t.equal(pickOperatingPoint(front, 0.85)?.nprobe, 256);
});

t.test('none reaches: the cheapest within the most accurate point’s error, not the full scan', async (t) => {
  t.equal(pickOperatingPoint(front, 0.95)?.nprobe, 2048, '0.9364 >= 0.94 - 1.645 x 0.00284');
  const exact = front.map((p) => ({ ...p, recallStderr: 0 }));
  t.equal(pickOperatingPoint(exact, 0.95)?.nprobe, 4096, 'without an error the most accurate');
  t.equal(pickOperatingPoint([], 0.95), undefined);
});

/**
 * Child process of test/models/int8-cpus.test.ts, run natively and under `qemu-x86_64 -cpu Haswell` (AVX2, no
 * AVX-512, no VNNI): each model directory named on the command line scores the same short inputs through
 * paramine's runtime. Prints one JSON line: whether the int8 probe saw saturation, and per model the
 * cross-encoder's P(paraphrase), the encoder's vectors, or the span model's hit (start, end, score).
 */
import { Encoder } from '../../src/encode/index.js';
import { int8Saturates } from '../../src/models/int8-kernels.js';
import { CrossEncoder, SpanModel } from '../../src/rerank/index.js';
import { positiveProbability } from '../../src/text/labels.js';

const INT8_PAIRS: Array<readonly [string, string]> = [
  ['Storm cuts power to 120,000 homes.', '120,000 households lost power in a storm.'],
  ['The cat sat on the mat.', 'Markets fell on Monday.'],
];

const out: Record<string, number[]> = {};
for (const dir of process.argv.slice(2)) {
  const [kind, path] = dir.split('=') as [string, string];
  if (kind === 'encoder') {
    const e = await Encoder.open(path, { worker: false, threads: 1 });
    out[path] = [...(await e.encode(INT8_PAIRS.map((p) => p[0])))];
    await e.close();
  } else if (kind === 'span') {
    const m = await SpanModel.open(path, { worker: false, threads: 1 });
    const [hit] = await m.find([
      { question: INT8_PAIRS[0]![1], text: `${INT8_PAIRS[0]![0]} ${INT8_PAIRS[1]![1]}` },
    ]);
    out[path] = hit ? [hit.start, hit.end, hit.score] : [];
    await m.close();
  } else {
    const ce = await CrossEncoder.open(path, { worker: false, threads: 1 });
    out[path] = (await ce.score(INT8_PAIRS)).map((s) =>
      positiveProbability(s.probabilities, ce.positiveLabels),
    );
    await ce.close();
  }
}
process.stdout.write(`${JSON.stringify({ saturates: await int8Saturates(), out })}\n`);

/**
 * Child process of test/index/index-budget.test.ts: loads the FAISS addon (a tiny search, so its libraries'
 * pages are resident), then opens the index in argv[2] and prints its native memory before and after.
 */
import { ShardedIndex } from '../../src/index/index.js';
import { createIndex } from '../../src/native/index.js';

const dir = process.argv[2] as string;
const warm = createIndex('Flat', 8, 'ip');
await warm.add(new Float32Array(8).fill(0.5), new BigInt64Array([0n]));
await warm.search(new Float32Array(8).fill(0.5), 1);
await warm.close();
// The resident set less the JavaScript heap's committed size: V8 grows and shrinks its heap with garbage and
// with the machine's load (a busy machine delays collection), and none of it is memory the index holds.
const native = () => {
  const m = process.memoryUsage();
  return m.rss - m.heapTotal;
};
const before = native();
// No checksum pass: its read buffers are garbage the GC has not yet taken, not memory the index holds.
const index = await ShardedIndex.open(dir, { verify: 'off' });
const after = native();
process.stdout.write(`${JSON.stringify({ before, after, ntotal: index.ntotal })}\n`);
await index.close();

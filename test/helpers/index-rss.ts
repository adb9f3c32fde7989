/**
 * Child process of test/index/index-budget.test.ts: loads the FAISS addon (a tiny search, so its libraries'
 * pages are resident), then opens the index in argv[2] and prints the resident set before and after.
 */
import { ShardedIndex } from '../../src/index/index.js';
import { createIndex } from '../../src/native/index.js';

const dir = process.argv[2] as string;
const warm = createIndex('Flat', 8, 'ip');
await warm.add(new Float32Array(8).fill(0.5), new BigInt64Array([0n]));
await warm.search(new Float32Array(8).fill(0.5), 1);
await warm.close();
const before = process.memoryUsage().rss;
// No checksum pass: its read buffers are garbage the GC has not yet taken, not memory the index holds.
const index = await ShardedIndex.open(dir, { verify: 'off' });
const after = process.memoryUsage().rss;
process.stdout.write(`${JSON.stringify({ before, after, ntotal: index.ntotal })}\n`);
await index.close();

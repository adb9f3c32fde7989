// Adding vectors into a trained, empty index through the binding (bench/experiments/kernels-ab/run.sh).
// usage: node fill.mjs TRAINED VECTORS.f16 n
import { openSync, readSync } from 'node:fs';
import { fromHalf } from '../../dist/index/index.js';
import { readIndex } from '../../dist/native/index.js';

const [trained, vpath, nArg] = process.argv.slice(2);
const n = Number(nArg),
  dim = 384;
const buf = Buffer.alloc(n * dim * 2);
readSync(openSync(vpath, 'r'), buf, 0, buf.length, 0);
const x = fromHalf(new Uint16Array(buf.buffer, buf.byteOffset, n * dim));
const ids = new BigInt64Array(n).map((_, i) => BigInt(i));
const idx = await readIndex(trained, { mmap: false });
const t = performance.now();
await idx.add(x, ids);
const s = (performance.now() - t) / 1000;
console.log(`add ${n} in ${s.toFixed(2)} s: ${(n / s).toFixed(0)} vectors/s`);

// Single queries through the binding, one at a time, p50/p90/mean per pass (bench/experiments/kernels-ab/run.sh).
// usage: node single.mjs INDEX QUERIES nprobe [nq] [passes]
import { readFileSync } from 'node:fs';
import { readIndex, setNumThreads } from '../../dist/native/index.js';

const [path, qpath, np, nqArg, passesArg] = process.argv.slice(2);
const nprobe = Number(np),
  nq = Number(nqArg ?? 1000),
  passes = Number(passesArg ?? 3);
if (process.env.THREADS) setNumThreads(Number(process.env.THREADS));
const b = readFileSync(qpath);
const q = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
const idx = await readIndex(path, { mmap: false });
for (let p = 0; p < passes; p++) {
  const lat = [];
  for (let i = 0; i < nq; i++) {
    const t = performance.now();
    await idx.search(q.subarray(i * 384, (i + 1) * 384), 10, { nprobe, efSearch: 2 * nprobe });
    lat.push(performance.now() - t);
  }
  lat.sort((a, c) => a - c);
  console.log(
    `node pass ${p} p50 ${lat[nq >> 1].toFixed(3)} p90 ${lat[Math.floor(nq * 0.9)].toFixed(3)} mean ${(lat.reduce((a, c) => a + c) / nq).toFixed(3)}`,
  );
}

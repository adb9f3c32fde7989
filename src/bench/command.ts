/** `paramine bench …`: every benchmark through the one harness (see harness.ts and BENCHMARKS.md). */
import type { Command } from 'commander';
import { classify } from './classify.js';
import { encode } from './encode-bench.js';
import { registerBenchmark } from './harness.js';
import { index } from './index-bench.js';
import { indexer } from './indexer-bench.js';
import { registerDistractors } from './make-distractors.js';
import { mine } from './mine-bench.js';
import { retrieval } from './retrieval.js';
import { serve } from './serve-bench.js';
import { speed } from './speed.js';

export function register(program: Command): void {
  const bench = program
    .command('bench')
    .description('retrieval, classification and speed benchmarks (see BENCHMARKS.md)');
  registerBenchmark(bench, retrieval);
  registerBenchmark(bench, classify);
  registerBenchmark(bench, speed);
  registerBenchmark(bench, encode);
  registerBenchmark(bench, index);
  registerBenchmark(bench, indexer);
  registerBenchmark(bench, serve);
  registerBenchmark(bench, mine);
  registerDistractors(bench);
}

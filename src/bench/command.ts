/**
 * `paramine bench …`: every benchmark through the one harness (see harness.ts and BENCHMARKS.md). Only the
 * benchmark the command line names is loaded (all of them for help), so what a benchmark measures of its
 * own process (memory above all) is not inflated by the others' modules.
 */
import type { Command } from 'commander';
import { registerBenchmark } from './harness.js';
import { registerDistractors } from './make-distractors.js';

type Registrar = (bench: Command) => void;

const BENCHMARKS: Record<string, () => Promise<Registrar>> = {
  retrieval: async () => {
    const { retrieval } = await import('./retrieval.js');
    return (c) => registerBenchmark(c, retrieval);
  },
  classify: async () => {
    const { classify } = await import('./classify.js');
    return (c) => registerBenchmark(c, classify);
  },
  speed: async () => {
    const { speed } = await import('./speed.js');
    return (c) => registerBenchmark(c, speed);
  },
  encode: async () => {
    const { encode } = await import('./encode-bench.js');
    return (c) => registerBenchmark(c, encode);
  },
  index: async () => {
    const { index } = await import('./index-bench.js');
    return (c) => registerBenchmark(c, index);
  },
  indexer: async () => {
    const { indexer } = await import('./indexer-bench.js');
    return (c) => registerBenchmark(c, indexer);
  },
  serve: async () => {
    const { serve } = await import('./serve-bench.js');
    return (c) => registerBenchmark(c, serve);
  },
  mine: async () => {
    const { mine } = await import('./mine-bench.js');
    return (c) => registerBenchmark(c, mine);
  },
  distractors: async () => registerDistractors,
};

const [, , command, name] = process.argv;
const picked =
  command === 'bench' && name !== undefined && name in BENCHMARKS ? [name] : Object.keys(BENCHMARKS);
const registrars = await Promise.all(picked.map((n) => (BENCHMARKS[n] as () => Promise<Registrar>)()));

export function register(program: Command): void {
  const bench = program
    .command('bench')
    .description('retrieval, classification and speed benchmarks (see BENCHMARKS.md)');
  for (const r of registrars) r(bench);
}

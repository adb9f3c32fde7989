/**
 * `paramine bench …`: every benchmark through the one harness (see harness.ts and BENCHMARKS.md). Only the
 * benchmark the command line names is loaded (all of them for help), so what a benchmark measures of its
 * own process (memory above all) is not inflated by the others' modules.
 */
import type { Command } from 'commander';
import type { z } from 'zod';
import { type Benchmark, registerBenchmark } from './harness.js';
import { registerDistractors } from './make-distractors.js';

type Registrar = (bench: Command) => void;

/** Registers a benchmark once its module is loaded. */
const lazy =
  <S extends z.ZodType, R>(load: () => Promise<Benchmark<S, R>>) =>
  async (): Promise<Registrar> => {
    const b = await load();
    return (c) => registerBenchmark(c, b);
  };

const BENCHMARKS: Record<string, () => Promise<Registrar>> = {
  retrieval: lazy(async () => (await import('./retrieval.js')).retrieval),
  classify: lazy(async () => (await import('./classify.js')).classify),
  speed: lazy(async () => (await import('./speed.js')).speed),
  encode: lazy(async () => (await import('./encode-bench.js')).encode),
  index: lazy(async () => (await import('./index-bench.js')).index),
  indexer: lazy(async () => (await import('./indexer-bench.js')).indexer),
  serve: lazy(async () => (await import('./serve-bench.js')).serve),
  mine: lazy(async () => (await import('./mine-bench.js')).mine),
  'bertscore-calibrate': lazy(async () => (await import('./bertscore-calibrate.js')).bertscoreCalibrate),
  'domain-speed': lazy(async () => (await import('./domain-speed.js')).domainSpeed),
  domain: lazy(async () => (await import('./domain-bench.js')).domain),
  web: lazy(async () => (await import('./web-bench.js')).web),
  scale: lazy(async () => (await import('./scale-bench.js')).scale),
  'scopes-nmr': lazy(async () => (await import('./scopes-mining.js')).scopesNmr),
  'scopes-subsentence': lazy(async () => (await import('./subsentence-bench.js')).scopesSubsentence),
  'scopes-crossover': lazy(async () => (await import('./scopes-vectors.js')).scopesCrossover),
  'scopes-calibrate': lazy(async () => (await import('./scopes-vectors.js')).scopesCalibrate),
  tune: lazy(async () => (await import('./tune-bench.js')).tune),
  'kill-loop': lazy(async () => (await import('./kill-loop.js')).killLoopBench),
  soak: lazy(async () => (await import('./soak.js')).soakBench),
  overload: lazy(async () => (await import('./overload.js')).overload),
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

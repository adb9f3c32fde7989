#!/usr/bin/env node
/**
 * The laboratory: our own experiments, apart from the product (FAISS keeps benchs/ beside faiss/). They
 * drive the built product (../../dist, what users run) and are neither compiled into dist/ nor shipped in
 * the image. `npm run lab -- <experiment> [options]` builds both and runs one; results and commands are in
 * BENCHMARKS.md and docs/benchmarks/.
 */
import { Command } from 'commander';
import type { z } from 'zod';
import { type Benchmark, registerBenchmark } from '../../dist/bench/harness.js';
import { type Registrars, runCommands } from '../../dist/cli/run.js';

/** An experiment, registered once its module is loaded (only the one the line names is). */
const lazy =
  <S extends z.ZodType, R>(load: () => Promise<Benchmark<S, R>>) =>
  async () => {
    const b = await load();
    return { register: (p: Command) => registerBenchmark(p, b) };
  };

const experiments: Registrars = {
  overload: lazy(async () => (await import('./overload.js')).overload),
  web: lazy(async () => (await import('./web-bench.js')).web),
  scale: lazy(async () => (await import('./scale-bench.js')).scale),
  tune: lazy(async () => (await import('./tune-bench.js')).tune),
  'bertscore-calibrate': lazy(async () => (await import('./bertscore-calibrate.js')).bertscoreCalibrate),
  domain: lazy(async () => (await import('./domain-bench.js')).domain),
  'domain-speed': lazy(async () => (await import('./domain-speed.js')).domainSpeed),
  'scopes-nmr': lazy(async () => (await import('./scopes-mining.js')).scopesNmr),
  'scopes-subsentence': lazy(async () => (await import('./subsentence-bench.js')).scopesSubsentence),
  'scopes-crossover': lazy(async () => (await import('./scopes-vectors.js')).scopesCrossover),
  'scopes-calibrate': lazy(async () => (await import('./scopes-vectors.js')).scopesCalibrate),
  'kill-loop': lazy(async () => (await import('./kill-loop.js')).killLoopBench),
  soak: lazy(async () => (await import('./soak.js')).soakBench),
  docs: lazy(async () => (await import('./docs-bench.js')).docsBench),
  'docs-planted': lazy(async () => (await import('./docs-planted.js')).docsPlanted),
  'docs-scale': lazy(async () => (await import('./docs-scale.js')).docsScale),
  'docs-scale-mine': lazy(async () => (await import('./docs-scale-mine.js')).docsScaleMine),
  'docs-score': lazy(async () => (await import('./docs-score.js')).docsScore),
  writes: lazy(async () => (await import('./writes-bench.js')).writesBench),
  since: lazy(async () => (await import('./since-bench.js')).sinceBench),
  compact: lazy(async () => (await import('./compact-bench.js')).compactBench),
  deletes: lazy(async () => (await import('./deletes-bench.js')).deletesBench),
  split: lazy(async () => (await import('./split-bench.js')).splitBench),
  'labels-latency': lazy(async () => (await import('./labels-latency.js')).labelsLatency),
  // moved out of `paramine bench`: they need ../shared/data or a Python reference
  speed: lazy(async () => (await import('./speed-lab.js')).speedLab),
  encode: lazy(async () => (await import('./encode-bench.js')).encode),
  index: lazy(async () => (await import('./index-bench.js')).index),
  indexer: lazy(async () => (await import('./indexer-lab.js')).indexerLab),
  mine: lazy(async () => (await import('./mine-bench.js')).mine),
  models: lazy(async () => (await import('./models-table.js')).models),
  encoders: lazy(async () => (await import('./encoders-table.js')).encoders),
  distractors: async () => ({ register: (await import('./make-distractors.js')).registerDistractors }),
};

const program = new Command()
  .name('paramine-lab')
  .description('paramine’s experiments (BENCHMARKS.md): speed, scale, robustness, against references')
  .showHelpAfterError()
  .exitOverride();
await runCommands(program, experiments);

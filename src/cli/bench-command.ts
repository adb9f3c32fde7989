/**
 * `paramine bench retrieval|classify|speed`: the benchmarks users run on their own index and models, through
 * the one harness (see harness.ts and BENCHMARKS.md). Our experiments (the model and encoder tables, speed
 * against sentence-transformers and Python FAISS, tune against autofaiss, kill loop, soak, scopes, domains,
 * ...) are the laboratory's: bench/ at the top level, `npm run lab`. Only the
 * benchmark the command line names is loaded (all of them for help), so what a benchmark measures of its
 * own process (memory above all) is not inflated by the others' modules.
 */
import type { Command } from 'commander';
import type { z } from 'zod';
import { type Benchmark, registerBenchmark } from '../bench/harness.js';

type Registrar = (bench: Command) => void;

/** Registers a benchmark once its module is loaded. */
const lazy =
  <S extends z.ZodType, R>(load: () => Promise<Benchmark<S, R>>) =>
  async (): Promise<Registrar> => {
    const b = await load();
    return (c) => registerBenchmark(c, b);
  };

const BENCHMARKS: Record<string, () => Promise<Registrar>> = {
  retrieval: lazy(async () => (await import('../bench/retrieval.js')).retrieval),
  classify: lazy(async () => (await import('../bench/classify.js')).classify),
  speed: lazy(async () => (await import('../bench/speed.js')).speed),
  // the parts of `bench speed`, each beside its reference (the lab's `speed` adds encode, index, mine)
  indexer: lazy(async () => (await import('../bench/indexer-bench.js')).indexer),
  serve: lazy(async () => (await import('../bench/serve-bench.js')).serve),
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

#!/usr/bin/env node
/** paramine <command>: one entry point; each stage registers its own sub-commands. */
import { Command } from 'commander';
import { type Registrars, runCommands } from './cli/run.js';
import { version } from './version.js';

const program = new Command()
  .name('paramine')
  .description(
    'Mine paraphrases from very large sentence collections (SBERT + FAISS IVF-PQ + cross-encoder).',
  )
  .version(version)
  // One line and the suggestion, not the whole help after it.
  .showHelpAfterError('(add --help for the options)')
  .exitOverride();

// Sub-commands, left to right along the pipeline. Each module exports register(program). Only the one the
// command line names is loaded (every one for help): a command carries no other command's modules, which
// keeps start-up short and the memory the benchmarks measure the command's own.
// `index` runs the one-machine build, or the distributed one with --queue (src/queue loads BullMQ only then).
const queue = () => import('./cli/queue-command.js');
const registrars: Registrars = {
  models: () => import('./cli/models-command.js'),
  index: queue,
  worker: queue,
  tune: () => import('./cli/tune-command.js'),
  add: () => import('./cli/writes-command.js'),
  delete: () => import('./cli/writes-command.js'),
  // `serve --queue` runs POST /v1/jobs on the queue's workers.
  serve: async () => {
    const [s, q] = await Promise.all([
      import('./cli/serve-command.js'),
      import('./cli/mine-queue-command.js'),
    ]);
    return { register: (p: Command) => s.register(p, q.serveWithQueue) };
  },
  query: () => import('./cli/query-command.js'),
  groups: () => import('./cli/groups-command.js'),
  // `mine --queue` splits the job over the queue's workers: the two front ends are joined here.
  mine: async () => {
    const [m, q] = await Promise.all([
      import('./cli/mine-command.js'),
      import('./cli/mine-queue-command.js'),
    ]);
    return { register: (p: Command) => void q.withQueue(m.mineCommand(p), m.specFromFlags, m.mine) };
  },
  export: () => import('./cli/export-command.js'),
  domain: () => import('./cli/domain-command.js'),
  docs: () => import('./cli/docs-command.js'),
  bench: () => import('./cli/bench-command.js'),
  pairs: () => import('./cli/pairs-command.js'),
  config: () => import('./cli/config-command.js'),
  annotations: () => import('./cli/annotations-command.js'),
};
await runCommands(program, registrars);

#!/usr/bin/env node
/** paramine <command>: one entry point; each stage registers its own sub-commands. */
import { Command, CommanderError } from 'commander';
import { isParamineError } from './errors.js';
import { version } from './version.js';

const program = new Command()
  .name('paramine')
  .description(
    'Mine paraphrases from very large sentence collections (SBERT + FAISS IVF-PQ + cross-encoder).',
  )
  .version(version)
  .showHelpAfterError()
  .exitOverride();

// Sub-commands, left to right along the pipeline. Each module exports register(program). Only the one the
// command line names is loaded (every one for help): a command carries no other command's modules, which
// keeps start-up short and the memory the benchmarks measure the command's own.
// `index` runs the one-machine build, or the distributed one with --queue (src/queue loads BullMQ only then).
const queue = () => import('./queue/command.js');
const registrars: Record<string, () => Promise<{ register: (p: Command) => void }>> = {
  models: () => import('./models/command.js'),
  index: queue,
  worker: queue,
  tune: () => import('./indexer/tune-command.js'),
  // `serve --queue` runs POST /v1/jobs on the queue's workers.
  serve: async () => {
    const [s, q] = await Promise.all([
      import('./server/serve-command.js'),
      import('./queue/mine-command.js'),
    ]);
    return { register: (p: Command) => s.register(p, q.serveWithQueue) };
  },
  query: () => import('./server/query-command.js'),
  groups: () => import('./indexer/groups-command.js'),
  // `mine --queue` splits the job over the queue's workers: the two front ends are joined here.
  mine: async () => {
    const [m, q] = await Promise.all([import('./mine/command.js'), import('./queue/mine-command.js')]);
    return { register: (p: Command) => void q.withQueue(m.mineCommand(p), m.specFromFlags, m.mine) };
  },
  export: () => import('./mine/export-command.js'),
  domain: () => import('./service/domain-command.js'),
  bench: () => import('./bench/command.js'),
  pairs: () => import('./bench/pairs-command.js'),
  config: () => import('./cli/config-command.js'),
  annotations: () => import('./cli/annotations-command.js'),
};
const first = process.argv[2];
const named = registrars[first ?? ''];
// Commander prints the program's usage and exits 0 for `paramine nosuch --help`: a typo must not pass as success.
if (first !== undefined && !first.startsWith('-') && first !== 'help' && named === undefined) {
  const known = Object.keys(registrars).join(', ');
  process.stderr.write(`paramine: unknown command '${first}' (commands: ${known}; see paramine --help)\n`);
  process.exit(2);
}
for (const load of named ? [named] : new Set(Object.values(registrars))) (await load()).register(program);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode);
  if (isParamineError(e)) {
    process.stderr.write(`paramine: ${e.code}: ${e.message}${e.field ? ` (${e.field})` : ''}\n`);
    process.exit(2);
  }
  throw e;
}

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

// Sub-commands, left to right along the pipeline. Each module exports register(program).
const registrars: Array<() => Promise<{ register: (p: Command) => void }>> = [
  () => import('./models/command.js'),
  () => import('./indexer/command.js'),
  () => import('./indexer/groups-command.js'),
  () => import('./server/serve-command.js'),
  () => import('./server/query-command.js'),
  () => import('./mine/command.js'),
  () => import('./mine/export-command.js'),
  () => import('./service/domain-command.js'),
  () => import('./bench/command.js'),
  () => import('./bench/pairs-command.js'),
];
for (const load of registrars) (await load()).register(program);

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

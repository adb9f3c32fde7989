/**
 * Runs a commander program whose sub-commands are registered lazily: only the module of the command the
 * line names is loaded (every one for help), an unknown command exits 2, and a ParamineError is one line on
 * stderr with exit code 2. Shared by `paramine` and the laboratory's `npm run lab` (bench/src/cli.ts).
 */
import { Command, CommanderError } from 'commander';
import { isParamineError } from '../errors.js';

export type Registrars = Record<string, () => Promise<{ register: (p: Command) => void }>>;

let known: Registrars = {};

/**
 * Another command as the command line would build it, on a program of its own (for `paramine config`,
 * which reads a command's options without running it); undefined for a name no registrar has.
 */
export async function loadCommand(program: Command, name: string): Promise<Command | undefined> {
  const load = known[name];
  if (load === undefined) return undefined;
  const fresh = new Command(program.name()).exitOverride();
  (await load()).register(fresh);
  return fresh.commands.find((c) => c.name() === name);
}

export async function runCommands(
  program: Command,
  registrars: Registrars,
  argv = process.argv,
): Promise<void> {
  const name = program.name();
  known = registrars;
  // `paramine … | head`: a reader that has seen enough is not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  const first = argv[2];
  const named = registrars[first ?? ''];
  // Commander prints the program's usage and exits 0 for `paramine nosuch --help`: a typo must not pass as success.
  if (first !== undefined && !first.startsWith('-') && first !== 'help' && named === undefined) {
    const known = Object.keys(registrars).join(', ');
    process.stderr.write(`${name}: unknown command '${first}' (commands: ${known}; see ${name} --help)\n`);
    process.exit(2);
  }
  // Commands of one module (add and delete) load the same module object: each registers once, since
  // commander throws on a command added twice.
  const modules = new Set<{ register: (p: Command) => void }>();
  for (const load of named ? [named] : new Set(Object.values(registrars))) modules.add(await load());
  for (const m of modules) m.register(program);
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) process.exit(e.exitCode);
    if (isParamineError(e)) {
      process.stderr.write(`${name}: ${e.code}: ${e.message}${e.field ? ` (${e.field})` : ''}\n`);
      process.exit(2);
    }
    throw e;
  }
}

/** `paramine tune`: the tuning of src/indexer/tune.ts from the command line, its flags from the options schema. */
import type { Command } from 'commander';
import { addFlags, flagValues } from '../config.js';
import { runTune, type TuneCommandOptions, tuneOptionsSchema } from '../indexer/tune.js';

export function register(program: Command): void {
  const cmd: Command = addFlags(
    program
      .command('tune')
      .description(
        "measure an index's operating points (recall@10 vs exact search, latency) and set its search defaults",
      ),
    tuneOptionsSchema,
  );
  cmd.action(async () => {
    const o = flagValues(cmd, tuneOptionsSchema) as TuneCommandOptions;
    await runTune(o, (line) => process.stdout.write(`${line}\n`));
  });
}

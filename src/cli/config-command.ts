/**
 * `paramine config COMMAND [flags]`: the effective settings of a command for these flags and this
 * environment, and where each value comes from (flag, env, default), from the same declaration the command
 * itself is built from.
 */
import { Command } from 'commander';
import { addSettings, describeSettings, type Settings } from '../config.js';
import { ParamineError } from '../errors.js';
import { SERVE_SETTINGS } from '../server/serve-command.js';

/** The commands whose options are declared as settings. */
const DECLARED: Record<string, Settings> = { serve: SERVE_SETTINGS };

export function register(program: Command): void {
  program
    .command('config')
    .description(
      "print a command's effective settings and where each comes from (flag, environment, default)",
    )
    .argument('<command>', `one of: ${Object.keys(DECLARED).join(', ')}`)
    .argument('[flags...]', "the command's flags, as you would give them")
    .option('--json', 'one JSON object instead of a table', false)
    .allowUnknownOption()
    .helpOption('--config-help', 'display help for config')
    .action((name: string, flags: string[], o: { json: boolean }) => {
      const settings = DECLARED[name];
      if (settings === undefined) {
        throw new ParamineError(
          'BAD_INPUT',
          `no declared settings for '${name}' (commands with settings: ${Object.keys(DECLARED).join(', ')})`,
          { field: 'command' },
        );
      }
      const target = addSettings(new Command(name).exitOverride(), settings, true);
      target.parse(flags, { from: 'user' });
      const rows = describeSettings(target, settings);
      if (o.json) {
        process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      const cell = (v: unknown) => (v === undefined ? '-' : typeof v === 'string' ? v : JSON.stringify(v));
      const table = rows.map((r) => [r.flag, cell(r.value), r.source, r.env ?? '']);
      const widths = [0, 1, 2].map((i) => Math.max(...table.map((r) => (r[i] as string).length), 6));
      for (const r of [['setting', 'value', 'source', 'env'], ...table]) {
        process.stdout.write(`${r.map((c, i) => (i < 3 ? c.padEnd(widths[i] as number) : c)).join('  ')}\n`);
      }
    });
}

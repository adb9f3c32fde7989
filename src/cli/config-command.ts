/**
 * `paramine config COMMAND [flags]`: the effective settings of a command for these flags and this
 * environment, and where each value comes from (flag, env, default), from the same declaration the command
 * itself is built from.
 */
import { Command } from 'commander';
import type { z } from 'zod';
import { addFlags, addSettings, describeFlags, describeSettings, type Settings } from '../config.js';
import { ENVIRONMENT } from '../env.js';
import { ParamineError } from '../errors.js';
import { buildOptionsSchema } from '../indexer/options.js';
import { tuneOptionsSchema } from '../indexer/tune.js';
import { queueOptionsSchema, workerOptionsSchema } from '../queue/options.js';
import { SERVE_SETTINGS } from './serve-command.js';

type Declared = { settings: Settings } | { schema: z.ZodObject };

/** The commands whose options are declared once: as settings, or as their stage's options schema. */
const DECLARED: Record<string, Declared> = {
  serve: { settings: SERVE_SETTINGS },
  index: { schema: buildOptionsSchema.extend(queueOptionsSchema.shape) },
  tune: { schema: tuneOptionsSchema },
  worker: { schema: workerOptionsSchema },
};

/** The effective values of `name`'s options for these flags. */
function describe(name: string, d: Declared, flags: string[]) {
  const target = new Command(name).exitOverride().allowUnknownOption();
  if ('settings' in d) {
    addSettings(target, d.settings, true).parse(flags, { from: 'user' });
    return describeSettings(target, d.settings);
  }
  addFlags(target, d.schema, true).parse(flags, { from: 'user' });
  return describeFlags(target, d.schema);
}

export function register(program: Command): void {
  const config: Command = program
    .command('config')
    .description(
      "print a command's effective settings and where each comes from (flag, environment, default)",
    )
    .argument('<command>', `one of: ${Object.keys(DECLARED).join(', ')}, or env (the environment variables)`)
    .argument('[flags...]', "the command's flags, as you would give them")
    .option('--json', 'one JSON object instead of a table', false)
    .allowUnknownOption()
    .helpOption('--config-help', 'display help for config')
    .action((name: string, flags: string[], o: { json: boolean }) => {
      // --help is taken as a command's flag (`paramine config serve --help`), so it is caught here.
      if (name === '--help' || name === '-h') return config.help();
      if (name === 'env')
        return printRows(environmentRows(), o.json, ['variable', 'value', 'source', 'read for']);
      const declared = DECLARED[name];
      if (declared === undefined) {
        throw new ParamineError(
          'BAD_INPUT',
          `no declared settings for '${name}' (commands with settings: ${Object.keys(DECLARED).join(', ')}; or env)`,
          { field: 'command' },
        );
      }
      printRows(describe(name, declared, flags), o.json);
    });
}

interface Row {
  flag: string;
  value: unknown;
  source: string;
  env?: string;
}

function printRows(rows: Row[], json: boolean, header = ['setting', 'value', 'source', 'env']): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  const cell = (v: unknown) => (v === undefined ? '-' : typeof v === 'string' ? v : JSON.stringify(v));
  const table = rows.map((r) => [r.flag, cell(r.value), r.source, r.env ?? '']);
  const widths = [0, 1, 2].map((i) => Math.max(...table.map((r) => (r[i] as string).length), 6));
  for (const r of [header, ...table]) {
    process.stdout.write(`${r.map((c, i) => (i < 3 ? c.padEnd(widths[i] as number) : c)).join('  ')}\n`);
  }
}

/** Every variable paramine reads: the declared ones and the settings' own, set or not (keys masked). */
function environmentRows(): Row[] {
  const settingVars = Object.values(DECLARED).flatMap((d) =>
    'settings' in d
      ? Object.values(d.settings).flatMap((s) => (s.env ? [[s.env, `a setting (${s.flag})`]] : []))
      : [],
  );
  const rows = [...Object.entries(ENVIRONMENT), ...settingVars] as Array<[string, string]>;
  return rows.map(([name, what]) => {
    const v = process.env[name];
    const secret = /KEY/.test(name) && v !== undefined;
    return {
      flag: name,
      value: secret ? '(set, not shown)' : v,
      source: v === undefined ? 'unset' : 'env',
      env: what,
    };
  });
}

/**
 * `paramine config COMMAND [SUBCOMMAND] [flags]`: the effective options of any command for these flags and
 * this environment, and where each value comes from (flag, env, default, or derived from the index),
 * read from the command as the command line builds it. Values the command would refuse are marked, naming
 * the flag or the environment variable, and the exit code is 1.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { z } from 'zod';
import { defaultOf, describeOptions, flagChecks, type OptionRow, type Settings } from '../config.js';
import { domainRequestSchema } from '../domain/index.js';
import { ENVIRONMENT } from '../env.js';
import { ParamineError } from '../errors.js';
import { readManifest } from '../index/manifest.js';
import { buildOptionsSchema } from '../indexer/options.js';
import { tuneOptionsSchema } from '../indexer/tune.js';
import { jobSpecSchema } from '../jobs/index.js';
import { resolveModelDir } from '../models/resolve.js';
import { queueOptionsSchema, workerOptionsSchema } from '../queue/options.js';
import { DEFAULT_RERANKER } from '../service/index.js';
import { loadCommand } from './run.js';
import { SERVE_SETTINGS } from './serve-command.js';

/** The commands whose values are checked by their declaration: settings, or their stage's options schema. */
const DECLARED: Record<string, Settings | z.ZodObject> = {
  serve: SERVE_SETTINGS,
  index: buildOptionsSchema.extend(queueOptionsSchema.shape),
  tune: tuneOptionsSchema,
  worker: workerOptionsSchema,
};

/** The command a path of names leads to (`docs align`), and the flags after it. */
function descend(cmd: Command, args: string[]): { cmd: Command; flags: string[]; path: string[] } {
  const path = [cmd.name()];
  let at = cmd;
  let rest = args;
  for (;;) {
    const next = at.commands.find((c) => c.name() === rest[0]);
    if (next === undefined) return { cmd: at, flags: rest, path };
    at = next;
    path.push(next.name());
    rest = rest.slice(1);
  }
}

type Parsable = Command & { _parseOptionsEnv?: () => void };

/** Parses the flags into the command without running it; environment variables fill what flags do not. */
function parseInto(cmd: Command, flags: string[], name: string): void {
  const { unknown } = cmd.parseOptions(flags);
  const bad = unknown.find((u) => u.startsWith('-'));
  if (bad !== undefined) {
    throw new ParamineError('BAD_INPUT', `${name} has no option ${bad} (see paramine ${name} --help)`, {
      field: bad,
    });
  }
  // Commander reads the environment while it parses a command for its action; the same step, here.
  (cmd as Parsable)._parseOptionsEnv?.();
}

/** What a command works out itself when a value is not given: shown as `derived`. */
async function derived(path: string, rows: OptionRow[]): Promise<void> {
  const by = new Map(rows.map((r) => [r.name, r]));
  const set = (name: string, value: unknown) => {
    const r = by.get(name);
    if (r !== undefined && r.value === undefined) Object.assign(r, { value, source: 'derived' });
  };
  const index = by.get('index')?.value;
  if (path === 'serve' && typeof index === 'string' && existsSync(index)) {
    const manifest = await readManifest(index).catch(() => undefined);
    if (manifest) set('model', `${manifest.model.id} (the index's encoder)`);
    set('jobsDir', join(index, 'jobs'));
    set('annotationsDir', join(index, 'annotations'));
    let reranker: string;
    try {
      reranker = resolveModelDir(DEFAULT_RERANKER, 'reranker');
    } catch {
      reranker = `none (${DEFAULT_RERANKER} is not fetched: paramine models fetch)`;
    }
    set('reranker', reranker);
  }
  if (path !== 'mine') return;
  const out = by.get('out')?.value;
  if (typeof out === 'string') set('state', `${out}.state`);
  // A flag not given leaves its field to the job schema's default.
  const fields: Record<string, z.ZodType | undefined> = {
    ...(jobSpecSchema.shape as Record<string, z.ZodType>),
    domainMode: domainRequestSchema.shape.mode,
    domainApply: domainRequestSchema.shape.apply,
  };
  for (const r of rows) {
    const field = fields[r.name];
    const d = field === undefined ? undefined : defaultOf(field);
    if (r.value === undefined && d !== undefined) Object.assign(r, { value: d, source: 'default' });
  }
}

/** The environment variables a command reads outside its options (ENVIRONMENT says "paramine NAME: …"). */
function commandEnvironment(path: string): OptionRow[] {
  return Object.entries(ENVIRONMENT)
    .filter(([, what]) => what.startsWith(`paramine ${path}:`))
    .map(([name]) => envRow(name, `env ${name}`));
}

function envRow(name: string, flag: string): OptionRow {
  const v = process.env[name];
  const secret = /KEY/.test(name) && v !== undefined;
  return { name, flag, value: secret ? '(set, not shown)' : v, source: v === undefined ? 'unset' : 'env' };
}

export function register(program: Command): void {
  const config: Command = program
    .command('config')
    .description(
      "print a command's effective options and where each comes from (flag, environment, default, derived)",
    )
    .argument('<command>', 'any command (and its subcommand: docs align), or env (the environment variables)')
    .argument('[flags...]', "the command's flags, as you would give them")
    .option('--json', 'one JSON array instead of a table', false)
    .allowUnknownOption()
    .helpOption('--config-help', 'display help for config')
    .action(async (name: string, args: string[], o: { json: boolean }) => {
      // --help is taken as a command's flag (`paramine config serve --help`), so it is caught here.
      if (name === '--help' || name === '-h') return config.help();
      if (name === 'env')
        return printRows(environmentRows(), o.json, ['variable', 'value', 'source', 'read for']);
      const top = name === 'config' ? undefined : await loadCommand(program, name);
      if (top === undefined) {
        throw new ParamineError('BAD_INPUT', `no command '${name}' (see paramine --help), or env`, {
          field: 'command',
        });
      }
      const { cmd, flags, path } = descend(top, args);
      const label = path.join(' ');
      parseInto(cmd, flags, label);
      const declared = DECLARED[label];
      const rows = describeOptions(cmd, declared === undefined ? undefined : flagChecks(declared));
      await derived(label, rows);
      printRows([...rows, ...commandEnvironment(label)], o.json);
      const problems = rows.flatMap((r) => (r.problem === undefined ? [] : [r.problem]));
      if (problems.length > 0) {
        process.stderr.write(`paramine ${label} would refuse: ${problems.join('; ')}\n`);
        process.exitCode = 1;
      }
    });
}

function printRows(rows: OptionRow[], json: boolean, header = ['setting', 'value', 'source', 'env']): void {
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

/** Every variable paramine reads: the declared ones and the serve settings' own, set or not (keys masked). */
function environmentRows(): OptionRow[] {
  const settingVars = Object.values(SERVE_SETTINGS as Settings).flatMap((s) =>
    s.env ? [[s.env, `a setting (${s.flag})`] as const] : [],
  );
  return [...Object.entries(ENVIRONMENT), ...settingVars].map(([name, what]) => ({
    ...envRow(name, name),
    env: what,
  }));
}

/**
 * Settings, each declared once: its zod type, its flag, its environment variable and its default live in
 * one entry (as text-embeddings-inference declares each option once with clap's `long`, `env` and
 * `default_value`). Commander options, the typed values and `paramine config`'s report of where each value
 * came from are all derived from that entry.
 */
import { type Command, Option } from 'commander';
import { z } from 'zod';
import { parseInput } from './validate.js';

export interface Setting {
  /** The value's type; strings from the command line or the environment are coerced by it. */
  schema: z.ZodType;
  /** Commander's flag syntax: `--batch-max <n>`, `--auth-all`, `--no-reranker`. */
  flag: string;
  description: string;
  /** Environment variable read when the flag is absent. */
  env?: string | undefined;
  /** The default, as the value itself (shown in --help and by `paramine config`). */
  default?: unknown;
  /** Allowed values (shown in --help, checked by commander). */
  choices?: readonly string[] | undefined;
  /** The command refuses to run without it. */
  required?: boolean | undefined;
  /** A setting whose flag is only a negation of another (`--no-mmap` beside `--mmap`): no value of its own. */
  negates?: string | undefined;
}

export type Settings = Record<string, Setting>;

/** The typed values of a settings declaration (negating flags have none of their own). */
export type ValuesOf<T extends Settings> = {
  [K in keyof T as T[K]['negates'] extends string ? never : K]: z.output<T[K]['schema']>;
};

/** Declares settings, keeping each entry's own zod type for `settingsOf`. */
export const defineSettings = <T extends Settings>(settings: T): T => settings;

/** Where a setting's value came from. */
export type Source = 'flag' | 'env' | 'default' | 'unset';

/** A commander Option for every setting (`lenient`: none mandatory, as `paramine config` reads them). */
export function addSettings(cmd: Command, settings: Settings, lenient = false): Command {
  for (const s of Object.values(settings)) {
    const o = new Option(s.flag, s.description);
    if (s.required && !lenient) o.makeOptionMandatory();
    if (s.env !== undefined) o.env(s.env);
    if (s.default !== undefined && !s.negates) o.default(s.default);
    if (s.choices !== undefined) o.choices(s.choices);
    cmd.addOption(o);
  }
  return cmd;
}

const objectOf = (settings: Settings) =>
  z.object(
    Object.fromEntries(
      Object.entries(settings)
        .filter(([, s]) => !s.negates)
        .map(([k, s]) => [k, s.schema]),
    ),
  );

/** The typed values of `settings` from a parsed command (zod-checked: BAD_INPUT names the option). */
export function settingsOf<T extends Settings>(cmd: Command, settings: T): ValuesOf<T> {
  return parseInput(objectOf(settings), cmd.opts(), 'options') as ValuesOf<T>;
}

/** Each setting's effective value and where it came from, for `paramine config`. */
export function describeSettings(
  cmd: Command,
  settings: Settings,
): Array<{ name: string; flag: string; env?: string; value: unknown; source: Source }> {
  const raw = cmd.opts();
  return Object.entries(settings)
    .filter(([, s]) => !s.negates)
    .map(([name, s]) => {
      const parsed = s.schema.safeParse(raw[name]);
      const value = parsed.success ? parsed.data : raw[name];
      const from = cmd.getOptionValueSource(name);
      const source: Source =
        from === 'cli' ? 'flag' : from === 'env' ? 'env' : from === 'default' ? 'default' : 'unset';
      return {
        name,
        flag: (s.flag.split(/[ ,]/)[0] as string).replace(/^--no-/, '--'),
        ...(s.env === undefined ? {} : { env: s.env }),
        value,
        source: source === 'unset' && value !== undefined ? 'default' : source,
      };
    });
}

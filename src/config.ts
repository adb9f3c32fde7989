/**
 * Settings, each declared once: its zod type, its flag, its environment variable and its default live in
 * one entry (as text-embeddings-inference declares each option once with clap's `long`, `env` and
 * `default_value`). Commander options, the typed values and `paramine config`'s report of where each value
 * came from are all derived from that entry.
 */
import { type Command, Option } from 'commander';
import { z } from 'zod';
import { ParamineError } from './errors.js';
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

/**
 * A commander Option with its default. A description that says the default in words ("(default: all
 * cores)") shows those words once instead of this machine's value beside them.
 */
function option(flag: string, description: string, dflt: unknown): Option {
  const said = /\s*\(default: ([^)]*)\)\s*$/.exec(description);
  const o = new Option(flag, said ? description.slice(0, said.index) : description);
  if (dflt !== undefined) o.default(dflt, said?.[1]);
  return o;
}

/** A commander Option for every setting (`lenient`: none mandatory, as `paramine config` reads them). */
export function addSettings(cmd: Command, settings: Settings, lenient = false): Command {
  for (const s of Object.values(settings)) {
    const o = option(s.flag, s.description, s.negates ? undefined : s.default);
    if (s.required && !lenient) o.makeOptionMandatory();
    if (s.env !== undefined) o.env(s.env);
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

/**
 * The typed values of `settings` from a parsed command (zod-checked: BAD_INPUT names the flag, or the
 * environment variable when the value came from one).
 */
export function settingsOf<T extends Settings>(cmd: Command, settings: T): ValuesOf<T> {
  for (const [name, s] of Object.entries(settings)) {
    if (s.env === undefined || cmd.getOptionValueSource(name) !== 'env') continue;
    const parsed = s.schema.safeParse(cmd.opts()[name]);
    if (!parsed.success) {
      const why = parsed.error.issues[0]?.message ?? 'invalid';
      throw new ParamineError(
        'BAD_INPUT',
        `${s.env}=${String(process.env[s.env])}: ${why} (it sets ${s.flag.split(/[ ,]/)[0]}; unset it or fix its value)`,
        { field: s.env },
      );
    }
  }
  return parseInput(objectOf(settings), cmd.opts(), 'options') as ValuesOf<T>;
}

// ---------------------------------------------------------------------------------------------------------
// Flags from an options schema: the zod object a stage validates its options with is the declaration; a
// field registered with `cli` gets a command-line flag whose type, default and choices are read from it.
// ---------------------------------------------------------------------------------------------------------

export interface CliMeta {
  /** Commander's flag syntax (`--factory <str>`, `--input <files...>`, `--no-tune`). */
  flag: string;
  description: string;
  env?: string;
  /** Turns the flag's text into what the schema takes, where a number or the text itself is not it. */
  parse?: (text: string) => unknown;
}

/** The command-line half of option schemas: `field.register(cli, { flag, description })`. */
export const cli = z.registry<CliMeta>();

type Def = { type: string; innerType?: z.ZodType; defaultValue?: unknown; entries?: Record<string, string> };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The field's default (`.default` or `.prefault`), its choices, and the type its flag's text becomes. */
function fieldFacts(field: z.ZodType): { default?: unknown; choices?: string[]; base: string } {
  let s = field;
  let dflt: unknown;
  for (;;) {
    const d = defOf(s);
    if ((d.type === 'default' || d.type === 'prefault') && dflt === undefined) dflt = d.defaultValue;
    if (d.innerType === undefined || !['default', 'prefault', 'optional', 'nullable'].includes(d.type)) {
      return {
        ...(dflt === undefined ? {} : { default: dflt }),
        ...(d.type === 'enum' && d.entries ? { choices: Object.values(d.entries) } : {}),
        base: d.type,
      };
    }
    s = d.innerType;
  }
}

/** A schema field's default, for a flag that feeds it (the schema keeps the one value). */
export const defaultOf = (field: z.ZodType): unknown => fieldFacts(field).default;

/** The camelCase attribute commander stores a flag under (`--no-tune` → tune, `--input` → input). */
const attributeOf = (flag: string): string =>
  (flag.split(/[ ,]/)[0] as string)
    .replace(/^--(no-)?/, '')
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

const entriesOf = (schema: z.ZodObject) =>
  Object.entries(schema.shape as Record<string, z.ZodType>).flatMap(([key, field]) => {
    const meta = cli.get(field);
    return meta === undefined ? [] : [{ key, field, meta }];
  });

/** Adds a flag for every field of `schema` registered in `cli` (`lenient`: none mandatory). */
export function addFlags(cmd: Command, schema: z.ZodObject, lenient = false): Command {
  for (const { field, meta } of entriesOf(schema)) {
    const facts = fieldFacts(field);
    const o = option(meta.flag, meta.description, meta.flag.startsWith('--no-') ? undefined : facts.default);
    if (!lenient && !field.safeParse(undefined).success && facts.default === undefined)
      o.makeOptionMandatory();
    if (meta.env !== undefined) o.env(meta.env);
    if (facts.choices !== undefined) o.choices(facts.choices);
    const parse = meta.parse ?? (facts.base === 'number' ? (v: string) => Number(v) : undefined);
    if (parse !== undefined) o.argParser(parse);
    cmd.addOption(o);
  }
  return cmd;
}

/** The flags' values under the schema's keys (not yet validated: the stage parses them with its schema). */
export function flagValues(cmd: Command, schema: z.ZodObject): Record<string, unknown> {
  const raw = cmd.opts();
  return Object.fromEntries(
    entriesOf(schema)
      .map(({ key, meta }) => [key, raw[attributeOf(meta.flag)]] as const)
      .filter(([, v]) => v !== undefined),
  );
}

/** The zod type each flag's value must pass, by commander attribute: a command's settings or option schema. */
export function flagChecks(declared: Settings | z.ZodObject): Map<string, z.ZodType> {
  if (declared instanceof z.ZodObject) {
    return new Map(entriesOf(declared).map(({ field, meta }) => [attributeOf(meta.flag), field]));
  }
  return new Map(
    Object.entries(declared)
      .filter(([, s]) => !s.negates)
      .map(([k, s]) => [k, s.schema]),
  );
}

export interface OptionRow {
  /** The attribute commander keeps the value under (the schema's or the settings' key). */
  name: string;
  flag: string;
  env?: string;
  value: unknown;
  source: Source | 'derived';
  /** Why the command would refuse this value: invalid, or required and missing. */
  problem?: string;
}

/**
 * Every option of a parsed command: its effective value, where it came from, and what the command would
 * refuse (a value `checks` rejects, naming the environment variable it came from; a required one missing).
 */
export function describeOptions(cmd: Command, checks: Map<string, z.ZodType> = new Map()): OptionRow[] {
  const positive = new Set(cmd.options.filter((o) => !o.negate).map((o) => o.attributeName()));
  return cmd.options
    .filter((o) => !(o.negate && positive.has(o.attributeName())) && o.long !== undefined)
    .map((o) => {
      const name = o.attributeName();
      const raw = cmd.getOptionValue(name);
      const from = cmd.getOptionValueSource(name);
      const source: Source =
        from === 'cli' ? 'flag' : from === 'env' ? 'env' : raw !== undefined ? 'default' : 'unset';
      const parsed = checks.get(name)?.safeParse(raw);
      const flag = (o.long as string).replace(/^--no-/, '--');
      let problem: string | undefined;
      const filled: unknown = parsed?.success ? parsed.data : raw;
      let value = filled;
      if (parsed !== undefined && !parsed.success && raw !== undefined) {
        const why = parsed.error.issues[0]?.message ?? 'invalid';
        value = `${String(raw)} (invalid: ${why})`;
        problem =
          from === 'env'
            ? `${o.envVar}=${String(raw)}: ${why} (it sets ${flag})`
            : `${flag} ${String(raw)}: ${why}`;
      } else if (o.mandatory && raw === undefined) {
        value = '(required, missing)';
        problem = `${flag} is required`;
      }
      return {
        name,
        flag,
        ...(o.envVar === undefined ? {} : { env: o.envVar }),
        value,
        // A schema's own default (the flag has none) is a default too.
        source: source === 'unset' && filled !== undefined ? 'default' : source,
        ...(problem === undefined ? {} : { problem }),
      };
    });
}

/**
 * The one harness every benchmark runs in. A benchmark declares its options (commander) and their zod
 * schema, and is a function from the validated options to a typed result; the harness parses, runs it
 * and writes what it returns: the JSON result (--json), the Markdown table (printed, and --md) and the
 * figure (--svg) where there is one. Progress goes to stderr, so stdout is the Markdown alone.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { parseInput } from '../validate.js';

export interface BenchOutput<R> {
  /** Machine-readable, stable keys. */
  result: R;
  markdown: string;
  svg?: string | undefined;
}

export type Log = (line: string) => void;

export interface Benchmark<S extends z.ZodType, R> {
  /** The sub-command: `paramine bench NAME`. */
  name: string;
  description: string;
  /** Adds the benchmark's own options; --json and --md (and --svg with `figure`) come from the harness. */
  options(cmd: Command): Command;
  /** Validates what commander parsed (strings, booleans, lists) into the options `run` takes. */
  schema: S;
  figure?: boolean;
  /** The benchmark also takes --out FILE for --json (its older name). */
  outIsJson?: boolean;
  run(options: z.output<S>, log: Log): Promise<BenchOutput<R>>;
}

/** Keeps a benchmark's types together where it is declared. */
export function defineBenchmark<S extends z.ZodType, R>(b: Benchmark<S, R>): Benchmark<S, R> {
  return b;
}

/** A comma-separated list option. */
export const list = (v: string): string[] =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const outputFilesSchema = z.object({
  json: z.string().min(1).optional(),
  out: z.string().min(1).optional(),
  md: z.string().min(1).optional(),
  svg: z.string().min(1).optional(),
});
export type OutputFiles = Omit<z.output<typeof outputFilesSchema>, 'out'>;

/** Writes `text` to `path`, making its folder first. */
export function writeFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** Prints the Markdown and writes each output that has a file. */
export function writeOutputs(files: OutputFiles, out: BenchOutput<unknown>): void {
  const md = out.markdown.endsWith('\n') ? out.markdown : `${out.markdown}\n`;
  if (files.json) writeFile(files.json, `${JSON.stringify(out.result, null, 2)}\n`);
  if (files.md) writeFile(files.md, md);
  if (files.svg && out.svg !== undefined) writeFile(files.svg, out.svg);
  process.stdout.write(md);
}

/** `paramine bench NAME [options]`. */
export function registerBenchmark<S extends z.ZodType, R>(parent: Command, b: Benchmark<S, R>): void {
  const cmd = b.options(parent.command(b.name).description(b.description));
  cmd.option('--json <file>', 'write the result as JSON').option('--md <file>', 'write the Markdown table');
  if (b.outIsJson) cmd.option('--out <file>', 'same as --json');
  if (b.figure) cmd.option('--svg <file>', 'write the figure');
  cmd.action(async (raw: Record<string, unknown>) => {
    const options = parseInput(b.schema, raw, 'options');
    const files = parseInput(outputFilesSchema, b.outIsJson ? raw : { ...raw, out: undefined }, 'options');
    const log: Log = (line) => process.stderr.write(`bench ${b.name}: ${line}\n`);
    const out = await b.run(options, log);
    writeOutputs({ json: files.json ?? files.out, md: files.md, svg: files.svg }, out);
  });
}

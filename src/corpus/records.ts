/** What the corpus readers yield (a record or a bad one) and the JSON-lines record parser they share. */
import type { z } from 'zod';
import type { ParamineError } from '../errors.js';

export interface CorpusRecord {
  /** Index of the file in the input list, and 1-based record number within it. */
  fileIndex: number;
  record: number;
  /** file:line, for messages. */
  where: string;
  text: string;
  meta?: Record<string, unknown>;
}

export interface BadRecord {
  fileIndex: number;
  record: number;
  where: string;
  error: ParamineError;
}

/** One JSON-lines record: an object with a string `text` (the schema says what else it may hold). */
export function parseTextLine<S extends z.ZodType<{ text: string }>>(
  line: string,
  schema: S,
): { value: z.output<S> } | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (e) {
    return { error: `invalid JSON (${(e as Error).message})` };
  }
  const r = schema.safeParse(parsed);
  return r.success ? { value: r.data } : { error: 'expected an object with a string "text" field' };
}

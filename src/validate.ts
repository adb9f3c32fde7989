/** zod at the HTTP boundary: the first issue becomes a 400 naming the offending field. */
import type { z } from 'zod';
import { ParamineError } from './errors.js';

export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>(
    (acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc === '' ? String(p) : `${acc}.${String(p)}`),
    '',
  );
}

export function parseInput<S extends z.ZodType>(schema: S, data: unknown, where = 'body'): z.output<S> {
  const r = schema.safeParse(data);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue ? fieldPath(issue.path) || where : where;
  throw new ParamineError('BAD_INPUT', `${field}: ${issue?.message ?? 'invalid input'}`, { field });
}

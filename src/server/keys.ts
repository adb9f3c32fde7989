/**
 * Where `paramine serve` finds its API keys: a file (`--api-keys-file`, one `name:key` a line, `#`
 * comments), the environment (`PARAMINE_API_KEYS="alice:KEY1,bob:KEY2"`; the older single
 * `PARAMINE_API_KEY=KEY` is named `env`), and — discouraged, since any user of the machine can read a
 * process's arguments with `ps` — `--api-key KEY`, named `argv-1`, `argv-2`, ...
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import type { ApiKey } from './auth.js';

const keySchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9._@-]{1,64}$/, 'key names are 1-64 letters, digits and . _ @ -'),
  key: z
    .string()
    .min(8, 'API keys need at least 8 characters')
    .regex(/^\S+$/, 'API keys contain no whitespace'),
});

export interface KeySources {
  /** Path of a `name:key` file. */
  file?: string | undefined;
  /** `PARAMINE_API_KEYS`: `name:key` entries separated by commas or whitespace. */
  named?: string | undefined;
  /** `PARAMINE_API_KEY`: one bare key. */
  single?: string | undefined;
  /** `--api-key` values: bare keys. */
  argv?: readonly string[] | undefined;
}

/** A checked key; errors name where it came from but never echo the key. */
function checked(name: string, key: string, where: string): ApiKey {
  const r = keySchema.safeParse({ name, key });
  if (r.success) return r.data;
  throw new ParamineError('BAD_CONFIG', `${where}: ${r.error.issues[0]?.message ?? 'invalid API key'}`, {
    field: where,
  });
}

/** One `name:key` entry; `where` names its source in errors. */
function namedKey(entry: string, where: string): ApiKey {
  const colon = entry.indexOf(':');
  if (colon <= 0) {
    throw new ParamineError('BAD_CONFIG', `${where}: expected name:key, got an entry without a name`, {
      field: where,
    });
  }
  return checked(entry.slice(0, colon), entry.slice(colon + 1), where);
}

function fileKeys(path: string): ApiKey[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ParamineError('FILE_NOT_FOUND', `cannot read the API keys file ${path}`, {
      field: 'api-keys-file',
      cause: e,
    });
  }
  return text.split('\n').flatMap((line, i) => {
    const entry = line.trim();
    return entry === '' || entry.startsWith('#') ? [] : [namedKey(entry, `${path}:${i + 1}`)];
  });
}

/** Every configured key; names and keys must be unique. */
export function loadApiKeys(sources: KeySources): ApiKey[] {
  const keys = [
    ...(sources.file === undefined ? [] : fileKeys(sources.file)),
    ...(sources.named ?? '')
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((e, i) => namedKey(e, `PARAMINE_API_KEYS[${i}]`)),
    ...(sources.single ? [checked('env', sources.single, 'PARAMINE_API_KEY')] : []),
    ...(sources.argv ?? []).map((key, i) => checked(`argv-${i + 1}`, key, 'api-key')),
  ];
  const seen = new Set<string>();
  for (const k of keys) {
    if (seen.has(k.name)) throw new ParamineError('BAD_CONFIG', `two API keys are named "${k.name}"`);
    seen.add(k.name);
  }
  if (new Set(keys.map((k) => k.key)).size !== keys.length) {
    throw new ParamineError('BAD_CONFIG', 'the same API key is configured under two names');
  }
  return keys;
}

/**
 * The real data in ../shared/data (beside the clone; see its README.md). Tests that need it run wherever
 * it is, CI included; elsewhere they are skipped with the reason printed. When CI is set a missing file is
 * an error, so a CI run can never pass by skipping them.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const SHARED_DATA = fileURLToPath(new URL('../../../shared/data/', import.meta.url));

/** The path of `rel` under ../shared/data, and tap's `skip` option: false, or why it is skipped. */
export function sharedData(rel = ''): { path: string; skip: string | false } {
  const path = `${SHARED_DATA}${rel}`;
  if (existsSync(path)) return { path, skip: false };
  const why = `${path} is missing: these tests need ../shared/data beside the clone (see its README.md)`;
  if (process.env.CI) throw new Error(`CI is set and ${why}`);
  return { path, skip: why };
}

import { readFileSync } from 'node:fs';

/** Fields of a /proc status text in KiB, in the order named (0 for one the kernel does not give). */
export function parseStatusKiB(status: string, names: readonly string[]): number[] {
  return names.map((k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0));
}

/** Fields of a process's /proc status in KiB (Linux; undefined where it cannot be read). */
export function statusKiB(names: readonly string[], pid: number | 'self' = 'self'): number[] | undefined {
  try {
    return parseStatusKiB(readFileSync(`/proc/${pid}/status`, 'utf8'), names);
  } catch {
    return undefined;
  }
}

/** The demo index (indexes/demo, built from examples/demo-corpus.jsonl when absent), or a given one. */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from './child.js';
import type { Log } from './harness.js';

const ROOT = resolve(dirname(fileURLToPath(new URL('../cli.js', import.meta.url))), '..');

export async function ensureDemoIndex(given: string | undefined, log: Log): Promise<string> {
  const dir = given ?? join(ROOT, 'indexes', 'demo');
  if (existsSync(join(dir, 'manifest.json'))) return dir;
  if (given !== undefined) throw new Error(`no index at ${dir} (manifest.json missing)`);
  log(`building the demo index in ${dir}`);
  mkdirSync(dirname(dir), { recursive: true });
  runCli([
    'index',
    '--input',
    join(ROOT, 'examples', 'demo-corpus.jsonl'),
    '--out',
    dir,
    '--resume',
    '--quiet',
  ]);
  return dir;
}

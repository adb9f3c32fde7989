/**
 * The import graph of src/ follows the pipeline: a stage imports only stages to its left, and front ends
 * (server, mine, bench, queue) import no other front end. Read from the sources' import statements
 * (static, dynamic and type-only alike), so a new edge the wrong way fails here, not in review.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import t from 'tap';

/** Stages left to right; one rank may hold several folders that must not import each other. */
const ORDER: ReadonlyArray<readonly string[]> = [
  ['corpus'],
  ['text'],
  ['models'],
  ['encode'],
  ['native'],
  ['index'],
  ['store'],
  ['indexer'],
  ['domain'],
  ['search'],
  ['rerank'],
  ['jobs', 'annotations'],
  ['service'],
  ['server', 'mine', 'bench', 'queue'],
];
/** Modules at the top of src/: errors, validation, progress bars are shared by all; cli.ts sits above all. */
const SHARED = new Set(['errors.ts', 'validate.ts', 'version.ts', 'progress.ts', 'config.ts']);
const TOP = new Set(['cli.ts']);

const SRC = resolve('src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'build' || e.name === 'node_modules' ? [] : sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** The stage of a file: its first folder under src/, or the file name for top-level modules. */
const stageOf = (file: string): string => relative(SRC, file).split(sep)[0] as string;

function rankOf(stage: string): number | undefined {
  const i = ORDER.findIndex((r) => r.includes(stage));
  return i < 0 ? undefined : i;
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => resolve(file, '..', (m[1] ?? m[2]) as string));
}

t.test('no stage imports a stage to its right, no front end another', async (t) => {
  const files = sources(SRC);
  t.ok(files.length > 50, `read ${files.length} sources`);
  const wrong: string[] = [];
  for (const file of files) {
    const from = stageOf(file);
    if (TOP.has(from)) continue;
    for (const target of importsOf(file)) {
      if (!target.startsWith(SRC + sep)) continue;
      const to = stageOf(target);
      if (to === from || SHARED.has(to.replace(/\.js$/, '.ts'))) continue;
      const a = rankOf(from);
      const b = rankOf(to);
      const where = `${relative(SRC, file)} -> ${relative(SRC, target)}`;
      if (a === undefined || b === undefined) wrong.push(`${where} (a stage missing from ORDER)`);
      else if (b >= a) wrong.push(`${where} (${b === a ? 'a front end imports another' : 'to the right'})`);
    }
  }
  t.same(wrong, [], 'edges against the pipeline');
});

/**
 * The architecture rules of docs/architecture.md hold over src/: imports only go to stages on the left,
 * front ends never import each other, and no file or function is over its line budget. Every violation
 * is listed with file:line. The checks are first shown to catch each kind of violation in a small tree.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import {
  type Finding,
  format,
  importViolations,
  longFiles,
  longFunctions,
  readStages,
  sourceFiles,
} from '../helpers/architecture.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOC = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
const limit = (re: RegExp, what: string) => {
  const m = re.exec(DOC);
  if (!m) throw new Error(`docs/architecture.md states no line limit for ${what}`);
  return Number(m[1]);
};
const MAX_FILE = limit(/^- files: at most (\d+) lines/m, 'files');
const MAX_FUNCTION = limit(/^- functions \(.*?\): at most (\d+) lines/ms, 'functions');

/** Each violation on its own line, then one assertion that there are none. */
function expectNone(t: Test, findings: Finding[], what: string): void {
  for (const f of findings) t.comment(format(f));
  t.equal(findings.length, 0, `${findings.length} ${what}`);
}

t.test('the checks catch each kind of violation', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'paramine-arch-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const write = (file: string, text: string) => {
    mkdirSync(join(root, dirname(file)), { recursive: true });
    writeFileSync(join(root, file), text);
  };
  const stages = readStages(
    '## Stages\n\n| rank | stage | paths | what |\n|---|---|---|---|\n' +
      '| 0 | common | `src/errors.ts` | x |\n| 1 | text | `src/text/` | x |\n' +
      '| 2 | server | `src/server/` | x |\n| 2 | bench | `src/bench/` | x |\n\n## Next\n| 9 | no | `x/` | x |\n',
  );
  t.same(
    stages.map((s) => [s.rank, s.name, s.paths]),
    [
      [0, 'common', ['src/errors.ts']],
      [1, 'text', ['src/text/']],
      [2, 'server', ['src/server/']],
      [2, 'bench', ['src/bench/']],
    ],
  );
  write('src/errors.ts', "import { a } from './text/a.js';\nexport const e = a;\n");
  write('src/text/a.ts', "import type { E } from '../errors.js';\nexport const a = 1;\n");
  write('src/server/s.ts', "export { a } from '../text/a.js';\nconst b = import('../bench/b.js');\n");
  write('src/bench/b.ts', `export const long = () => {\n${'  f();\n'.repeat(79)}};\n`);
  write('src/other/o.ts', '\n'.repeat(12));
  const files = sourceFiles(root, 'src', ['.ts']);
  t.same(importViolations(root, stages, files).map(format), [
    'src/errors.ts:1 common imports text (./text/a.js): a stage on its right',
    'src/other/o.ts:1 belongs to no stage of docs/architecture.md',
    'src/server/s.ts:2 server imports bench (../bench/b.js): front ends never import each other',
  ]);
  t.same(longFunctions(root, files, 80).map(format), ['src/bench/b.ts:1 long: 81 lines (at most 80)']);
  t.same(longFiles(root, ['src/other/o.ts', 'src/text/a.ts'], 11).map(format), [
    'src/other/o.ts:12 12 lines (at most 11)',
  ]);
});

t.test('src/ follows the stage table of docs/architecture.md', async (t) => {
  const stages = readStages(DOC);
  const ts = sourceFiles(ROOT, 'src', ['.ts']);
  t.equal(new Set(stages.map((s) => s.name)).size, stages.length, 'stage names are unique');
  t.ok(ts.length > 50, `${ts.length} TypeScript files under src/`);
  expectNone(t, importViolations(ROOT, stages, ts), 'imports going right or between front ends');
});

t.test(`no file under src/ over ${MAX_FILE} lines`, async (t) => {
  const files = sourceFiles(ROOT, 'src', ['.ts', '.cc', '.h', '.py', '.gyp']);
  expectNone(t, longFiles(ROOT, files, MAX_FILE), 'files too long');
});

t.test(`no function under src/ over ${MAX_FUNCTION} lines`, async (t) => {
  expectNone(t, longFunctions(ROOT, sourceFiles(ROOT, 'src', ['.ts']), MAX_FUNCTION), 'functions too long');
});

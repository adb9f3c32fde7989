/**
 * The architecture rules of docs/architecture.md, checked over src/ with the TypeScript compiler API:
 * imports only go to stages on the left (front ends of one rank never import each other), files stay
 * under a line budget, and so do functions. Every finding carries file:line so it can be fixed at once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

export interface Stage {
  /** Position along the pipeline; stages of equal rank (the front ends) may not import each other. */
  rank: number;
  name: string;
  /** Repository-relative folders (ending in `/`) and files that belong to the stage. */
  paths: string[];
}

export interface Finding {
  /** Repository-relative path. */
  file: string;
  line: number;
  message: string;
}

export const format = (f: Finding): string => `${f.file}:${f.line} ${f.message}`;

/**
 * The stage table of docs/architecture.md: the rows `| rank | name | paths | ... |` under the heading
 * `## Stages`, paths in backticks. Throws when the table is missing or malformed, so the rules cannot
 * silently check nothing.
 */
export function readStages(markdown: string): Stage[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Stages'));
  if (section === undefined) throw new Error('docs/architecture.md has no "## Stages" section');
  const stages: Stage[] = [];
  for (const line of section.split('\n')) {
    const m = /^\|\s*(\d+)\s*\|\s*([a-z]+)\s*\|([^|]*)\|/.exec(line);
    if (!m) continue;
    const paths = [...(m[3] ?? '').matchAll(/`([^`]+)`/g)].map((x) => x[1] as string);
    if (paths.length === 0) throw new Error(`stage ${m[2]} lists no paths`);
    stages.push({ rank: Number(m[1]), name: m[2] as string, paths });
  }
  if (stages.length < 2) throw new Error('the "## Stages" table of docs/architecture.md has no rows');
  return stages;
}

/** Source files under `dir` (repository-relative, `/`-separated), build output folders left out. */
export function sourceFiles(root: string, dir: string, exts: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(join(root, d), { withFileTypes: true })) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== 'build' && e.name !== 'node_modules') walk(p);
      } else if (exts.some((x) => e.name.endsWith(x))) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

export function stageOf(stages: readonly Stage[], file: string): Stage | undefined {
  return stages.find((s) => s.paths.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p)));
}

function parse(root: string, file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
}

const lineOf = (sf: ts.SourceFile, pos: number) => sf.getLineAndCharacterOfPosition(pos).line + 1;

/** Relative module specifiers of a file: static imports, re-exports and dynamic `import('...')`. */
export function relativeImports(sf: ts.SourceFile): Array<{ spec: string; line: number }> {
  const found: Array<{ spec: string; line: number }> = [];
  const visit = (node: ts.Node) => {
    let spec: ts.Expression | undefined;
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) spec = node.moduleSpecifier;
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      spec = node.arguments[0];
    if (spec && ts.isStringLiteralLike(spec) && spec.text.startsWith('.'))
      found.push({ spec: spec.text, line: lineOf(sf, node.getStart(sf)) });
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** Every import that goes right, goes between front ends of one rank, or touches a file in no stage. */
export function importViolations(
  root: string,
  stages: readonly Stage[],
  files: readonly string[],
): Finding[] {
  const findings: Finding[] = [];
  for (const file of files) {
    const from = stageOf(stages, file);
    if (!from) {
      findings.push({ file, line: 1, message: 'belongs to no stage of docs/architecture.md' });
      continue;
    }
    for (const { spec, line } of relativeImports(parse(root, file))) {
      const abs = resolve(root, dirname(file), spec).replace(/\.js$/, '.ts');
      const target = relative(root, abs).split(sep).join('/');
      const to = stageOf(stages, target);
      if (!to) findings.push({ file, line, message: `imports ${spec}, which belongs to no stage` });
      else if (to.name !== from.name && to.rank >= from.rank) {
        const why = to.rank === from.rank ? 'front ends never import each other' : 'a stage on its right';
        findings.push({ file, line, message: `${from.name} imports ${to.name} (${spec}): ${why}` });
      }
    }
  }
  return findings;
}

/** Files longer than `max` lines. */
export function longFiles(root: string, files: readonly string[], max: number): Finding[] {
  const findings: Finding[] = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > max) findings.push({ file, line: max + 1, message: `${lines} lines (at most ${max})` });
  }
  return findings;
}

/** What a function is called where it is defined: its own name, the name it is assigned to, or its role. */
function functionName(node: ts.FunctionLikeDeclaration, sf: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name) return node.name.getText(sf);
  const p = node.parent;
  if ((ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && p.name)
    return p.name.getText(sf);
  if (ts.isCallExpression(p)) return `callback of ${p.expression.getText(sf).slice(0, 40)}(…)`;
  return 'anonymous function';
}

/** Functions (declarations, methods, accessors, constructors, arrows, function expressions) over `max` lines. */
export function longFunctions(root: string, files: readonly string[], max: number): Finding[] {
  const findings: Finding[] = [];
  for (const file of files) {
    const sf = parse(root, file);
    const visit = (node: ts.Node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const fn = node as ts.FunctionLikeDeclaration;
        const start = lineOf(sf, fn.getStart(sf));
        const lines = lineOf(sf, fn.getEnd()) - start + 1;
        if (lines > max)
          findings.push({
            file,
            line: start,
            message: `${functionName(fn, sf)}: ${lines} lines (at most ${max})`,
          });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return findings;
}

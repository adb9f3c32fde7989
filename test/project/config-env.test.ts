/**
 * A bad environment variable is named: by the command that would use it, and by `paramine config`, which
 * covers every command (subcommands too), marks what the command would refuse (exit 1) and shows what the
 * command derives itself. Through the built CLI (dist/cli.js, built by scripts/setup), as config.test.ts:
 * each run through tsx compiled the CLI again, ~6 s a run.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildIndex } from '../../src/indexer/build.js';

const run = (...args: string[]) =>
  spawnSync(process.execPath, ['dist/cli.js', ...args], {
    encoding: 'utf8',
    env: { ...process.env, PARAMINE_PORT: 'abc' },
  });
const rowsOf = (stdout: string) =>
  Object.fromEntries(
    (JSON.parse(stdout) as Array<{ name: string; value: unknown; source: string }>).map((r) => [r.name, r]),
  );

t.test('PARAMINE_PORT=abc', async (t) => {
  const serve = run('serve', '--index', 'no-such-index');
  t.not(serve.status, 0);
  t.match(serve.stderr, /PARAMINE_PORT=abc/, 'serve names the variable');
  t.match(serve.stderr, /--port/, 'and the setting it feeds');
  const config = run('config', 'serve', '--index', 'x');
  t.equal(config.status, 1, 'config says serve would refuse');
  t.match(config.stdout, /--port\s+abc \(invalid:/, 'config marks the value invalid');
  t.match(config.stderr, /would refuse: PARAMINE_PORT=abc: .*\(it sets --port\)/);
});

t.test('config covers every command, its subcommands and what it derives', async (t) => {
  const mine = run('config', 'mine', '--index', 'i', '--out', 'p.jsonl', '--k', '5', '--json');
  t.equal(mine.status, 0, mine.stderr);
  t.match(rowsOf(mine.stdout), {
    k: { value: 5, source: 'flag' },
    batchSize: { value: 128, source: 'default' },
    state: { value: 'p.jsonl.state', source: 'derived' },
  });
  const align = run('config', 'docs', 'align', '--index', 'i', '--out', 'a.jsonl', '--min', '0.3', '--json');
  t.match(rowsOf(align.stdout), { min: { value: '0.3', source: 'flag' }, partners: { source: 'default' } });
  const missing = run('config', 'serve');
  t.equal(missing.status, 1);
  t.match(missing.stderr, /--index is required/);
  const typo = run('config', 'mine', '--min-cosnie', '0.5');
  t.equal(typo.status, 2);
  t.match(typo.stderr, /mine has no option --min-cosnie/);

  const dir = mkdtempSync(join(tmpdir(), 'paramine-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'c.txt'), 'One sentence here.\nAnother sentence there.\n');
  const index = join(dir, 'index');
  await buildIndex({
    inputs: [join(dir, 'c.txt')],
    out: index,
    model: 'test/fixtures/tiny-encoder',
    quiet: true,
  });
  const serve = spawnSync(
    process.execPath,
    ['dist/cli.js', 'config', 'serve', '--index', index, '--no-reranker', '--json'],
    { encoding: 'utf8' },
  );
  t.equal(serve.status, 0, serve.stderr);
  t.match(rowsOf(serve.stdout), {
    model: { value: /tiny-encoder.*the index's encoder/, source: 'derived' },
    reranker: { value: false, source: 'flag' },
    jobsDir: { value: join(index, 'jobs'), source: 'derived' },
    queue: { source: 'unset' },
    PARAMINE_API_KEYS: { source: /env|unset/ },
  });
});

t.test('an unknown option: one line and the suggestion, not the whole help', async (t) => {
  const r = spawnSync(process.execPath, ['dist/cli.js', 'index', '--inptu', 'x'], {
    encoding: 'utf8',
  });
  t.not(r.status, 0);
  t.match(r.stderr, /Did you mean --input\?/);
  t.ok(r.stderr.trim().split('\n').length <= 4, r.stderr);
});

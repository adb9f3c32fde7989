/** A bad environment variable is named: by the command that would use it, and by `paramine config`. */
import { spawnSync } from 'node:child_process';
import t from 'tap';

const run = (...args: string[]) =>
  spawnSync(process.execPath, [...process.execArgv, 'src/cli.ts', ...args], {
    encoding: 'utf8',
    env: { ...process.env, PARAMINE_PORT: 'abc' },
  });

t.test('PARAMINE_PORT=abc', async (t) => {
  const serve = run('serve', '--index', 'no-such-index');
  t.not(serve.status, 0);
  t.match(serve.stderr, /PARAMINE_PORT=abc/, 'serve names the variable');
  t.match(serve.stderr, /--port/, 'and the setting it feeds');
  const config = run('config', 'serve', '--index', 'x');
  t.equal(config.status, 0);
  t.match(config.stdout, /--port\s+abc \(invalid:/, 'config marks the value invalid');
});

t.test('an unknown option: one line and the suggestion, not the whole help', async (t) => {
  const r = spawnSync(process.execPath, [...process.execArgv, 'src/cli.ts', 'index', '--inptu', 'x'], {
    encoding: 'utf8',
  });
  t.not(r.status, 0);
  t.match(r.stderr, /Did you mean --input\?/);
  t.ok(r.stderr.trim().split('\n').length <= 4, r.stderr);
});

/**
 * `paramine --help` loads every command's module (only the named one otherwise): each command appears once and
 * help exits 0; a command no module registers exits 2.
 */
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { runCli } from '../helpers/cli.js';

t.test('paramine --help lists every command once', async (t) => {
  const help = runCli('--help');
  const commands = [...help.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]);
  for (const c of ['models', 'index', 'worker', 'tune', 'add', 'delete', 'serve', 'query', 'mine', 'bench']) {
    t.equal(commands.filter((x) => x === c).length, 1, `${c} listed once`);
  }
});

t.test('an unknown command exits 2 and names the known ones', async (t) => {
  const r = spawnSync(process.execPath, [...process.execArgv, 'src/cli.ts', 'nosuch'], { encoding: 'utf8' });
  t.equal(r.status, 2);
  t.match(r.stderr, /unknown command 'nosuch' \(commands: .*add, delete/);
});

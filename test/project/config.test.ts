/**
 * Settings declared once: flags built from an options schema (type, default, choices and help in one
 * place), the values read back under the schema's keys, and `paramine config` reporting where each value
 * came from (flag, environment, default) for commands and for the environment variables.
 */
import { execFileSync } from 'node:child_process';
import { Command } from 'commander';
import t from 'tap';
import { z } from 'zod';
import { addFlags, cli, defaultOf, describeOptions, flagChecks, flagValues } from '../../src/config.js';
import { buildOptionsSchema } from '../../src/indexer/options.js';

const schema = z.object({
  inputs: z.array(z.string()).min(1).register(cli, { flag: '--input <files...>', description: 'files' }),
  shards: z.number().int().min(1).default(3).register(cli, { flag: '--shards <n>', description: 'shards' }),
  metric: z.enum(['ip', 'l2']).default('ip').register(cli, { flag: '--metric <m>', description: 'metric' }),
  tune: z.boolean().default(true).register(cli, { flag: '--no-tune', description: 'skip tuning' }),
  keys: z
    .array(z.string())
    .default([])
    .register(cli, { flag: '--keys <list>', description: 'keys', parse: (v) => v.split(',') }),
  port: z
    .number()
    .int()
    .optional()
    .register(cli, { flag: '--port <n>', description: 'port', env: 'TEST_PORT' }),
  internal: z.number().default(7),
});

const parsed = (args: string[], env: Record<string, string> = {}) => {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const cmd = addFlags(new Command('x').exitOverride(), schema);
    cmd.parse(args, { from: 'user' });
    return cmd;
  } finally {
    process.env = saved;
  }
};

t.test('flags take their type, default and choices from the schema', async (t) => {
  const cmd = parsed(['--input', 'a', 'b', '--shards', '5', '--no-tune', '--keys', 'x,y']);
  t.same(schema.parse(flagValues(cmd, schema)), {
    inputs: ['a', 'b'],
    shards: 5,
    metric: 'ip',
    tune: false,
    keys: ['x', 'y'],
    internal: 7,
  });
  t.same(schema.parse(flagValues(parsed(['--input', 'a']), schema)).shards, 3, 'the schema default');
  t.throws(() => parsed(['--input', 'a', '--metric', 'cos']), /Allowed choices are ip, l2/);
  t.throws(() => parsed([]), /required option '--input <files...>' not specified/);
  t.notOk(
    addFlags(new Command('y'), schema).options.some((o) => o.long === '--internal'),
    'a field without a flag gets none',
  );
  t.equal(defaultOf(buildOptionsSchema.shape.targetRecall), 0.95);
});

t.test('describeOptions says where each value came from', async (t) => {
  const rows = describeOptions(
    parsed(['--input', 'a', '--shards', '4'], { TEST_PORT: '99' }),
    flagChecks(schema),
  );
  const by = Object.fromEntries(rows.map((r) => [r.name, r]));
  t.match(by.shards, { value: 4, source: 'flag' });
  t.match(by.metric, { value: 'ip', source: 'default' });
  t.match(by.port, { value: 99, source: 'env', env: 'TEST_PORT' });
  t.match(by.keys, { value: [], source: 'default' });
});

const paramine = (args: string[], env: Record<string, string> = {}) =>
  execFileSync(process.execPath, ['dist/cli.js', ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });

t.test('paramine config reports a command built from its schema, and the environment', async (t) => {
  const rows = JSON.parse(
    paramine(['config', 'index', '--input', 'a.txt', '--out', 'x', '--shards', '2', '--json']),
  );
  const by = Object.fromEntries(rows.map((r: { name: string }) => [r.name, r]));
  t.match(by.shards, { value: 2, source: 'flag' });
  t.match(by.targetRecall, { value: 0.95, source: 'default' });
  t.match(by.chunkLines, { value: 8192, source: 'default' }, 'the distributed build options too');
  t.match(paramine(['index', '--help']), /--target-recall <r>.*\n?.*\(default: 0\.95\)/);
  const envRows = JSON.parse(
    paramine(['config', 'env', '--json'], { PARAMINE_API_KEYS: 'a:secret-key-1', PARAMINE_PORT: '9' }),
  );
  const byName = Object.fromEntries(envRows.map((r: { flag: string }) => [r.flag, r]));
  t.match(byName.PARAMINE_API_KEYS, { value: '(set, not shown)', source: 'env' });
  t.match(byName.PARAMINE_PORT, { value: '9', source: 'env' });
  t.match(byName.PARAMINE_MODELS_DIR, { source: 'unset' });
  t.notMatch(JSON.stringify(envRows), /secret-key-1/, 'a key is never printed');
});

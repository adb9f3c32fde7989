/** Named API keys from a file, the environment and argv: parsed, checked, never echoed in errors. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ApiKeys } from '../../src/server/auth.js';
import { loadApiKeys } from '../../src/server/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-keys-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('file, PARAMINE_API_KEYS, PARAMINE_API_KEY and argv together', async (t) => {
  const file = join(dir, 'keys');
  writeFileSync(file, '# annotators\nalice:alice-key-123\n\n  bob:bob:key:with:colons  \n');
  const keys = loadApiKeys({
    file,
    named: 'carol:carol-key-1, dave:dave-key-12\nerin:erin-key-12',
    single: 'single-key-1',
    argv: ['argv-key-12'],
  });
  t.same(
    keys.map((k) => k.name),
    ['alice', 'bob', 'carol', 'dave', 'erin', 'env', 'argv-1'],
  );
  t.equal(keys[1]?.key, 'bob:key:with:colons', 'the key is everything after the first colon');
  const auth = new ApiKeys({ keys, protectAll: false });
  t.equal(auth.nameOf('bob:key:with:colons'), 'bob');
  t.equal(auth.nameOf('argv-key-12'), 'argv-1');
  t.equal(auth.nameOf('argv-key-13'), undefined);
  t.same(loadApiKeys({}), []);
});

t.test('bad keys are BAD_CONFIG naming where, without the key', async (t) => {
  const file = join(dir, 'bad-keys');
  writeFileSync(file, 'alice:alice-key-123\nbob:short\n');
  t.throws(() => loadApiKeys({ file }), { code: 'BAD_CONFIG', field: `${file}:2` });
  try {
    loadApiKeys({ file });
  } catch (e) {
    t.notMatch((e as Error).message, /short/, 'the message does not echo the key');
  }
  t.throws(() => loadApiKeys({ named: 'no-name-key-123' }), { code: 'BAD_CONFIG' });
  t.throws(() => loadApiKeys({ named: 'a:key-one-123,a:key-two-123' }), {
    code: 'BAD_CONFIG',
    message: /named "a"/,
  });
  t.throws(() => loadApiKeys({ named: 'a:key-one-123,b:key-one-123' }), {
    code: 'BAD_CONFIG',
    message: /two names/,
  });
  t.throws(() => loadApiKeys({ file: join(dir, 'missing') }), { code: 'FILE_NOT_FOUND' });
});

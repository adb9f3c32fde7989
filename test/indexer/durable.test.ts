/** src/durable.ts: whole-or-nothing file replacement and the one file hash. */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  dropStaleTemps,
  publishFile,
  replaceDir,
  replaceFile,
  sha256,
  sha256File,
  writeFileAtomic,
  writeFileAtomicSync,
} from '../../src/durable.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-durable-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const leftovers = () => readdirSync(dir).filter((f) => f.includes('.tmp'));

t.test('writes replace the file whole and leave no temporary', async (t) => {
  const p = join(dir, 'a.json');
  await writeFileAtomic(p, 'one');
  await writeFileAtomic(p, new Uint8Array([116, 119, 111]));
  t.equal(readFileSync(p, 'utf8'), 'two');
  writeFileAtomicSync(p, 'three');
  t.equal(readFileSync(p, 'utf8'), 'three');
  t.same(leftovers(), []);
});

t.test('a writer that fails leaves the old file and no temporary', async (t) => {
  const p = join(dir, 'b.bin');
  writeFileSync(p, 'old');
  await t.rejects(
    replaceFile(p, async (tmp) => {
      await writeFile(tmp, 'half of the n');
      throw new Error('disk full');
    }),
    /disk full/,
  );
  t.equal(readFileSync(p, 'utf8'), 'old');
  t.same(leftovers(), []);
});

t.test('publishFile moves a finished file into place', async (t) => {
  const from = join(dir, 'c.partial');
  writeFileSync(from, 'done');
  await publishFile(from, join(dir, 'c'));
  t.equal(readFileSync(join(dir, 'c'), 'utf8'), 'done');
  t.notOk(readdirSync(dir).includes('c.partial'));
});

t.test('replaceDir swaps in a whole directory (a model, a domain), the old one gone', async (t) => {
  const final = join(dir, 'model');
  const build = (name: string, text: string) => {
    const staging = join(dir, name);
    mkdirSync(join(staging, 'sub'), { recursive: true });
    writeFileSync(join(staging, 'sub', 'config.json'), text);
    return staging;
  };
  await replaceDir(final, build('.staging-1', 'first'), join(dir, '.aside'));
  t.equal(readFileSync(join(final, 'sub', 'config.json'), 'utf8'), 'first', 'where there was none');
  await replaceDir(final, build('.staging-2', 'second'), join(dir, '.aside'));
  t.equal(readFileSync(join(final, 'sub', 'config.json'), 'utf8'), 'second', 'over an old one');
  t.notOk(existsSync(join(dir, '.aside')) || existsSync(join(dir, '.staging-2')), 'nothing left beside it');
});

t.test('sha256 of bytes and of a file agree with node:crypto', async (t) => {
  const bytes = Buffer.alloc(3 << 20, 7); // over one read chunk
  const p = join(dir, 'd.bin');
  writeFileSync(p, bytes);
  const want = createHash('sha256').update(bytes).digest('hex');
  t.equal(sha256(bytes), want);
  t.equal(await sha256File(p), want);
});

t.test("dropStaleTemps removes a dead writer's temporary and keeps a live one's", async (t) => {
  const p = join(dir, 'vectors.f16');
  const dead = spawnSync('true').pid as number; // exited: its pid is no one's now
  writeFileSync(`${p}.tmp-${dead}`, 'torn');
  writeFileSync(`${p}.tmp-${process.pid}`, 'being written');
  writeFileSync(join(dir, `other.tmp-${dead}`), 'not ours');
  await dropStaleTemps(p);
  const left = readdirSync(dir).filter((f) => f.includes('.tmp-'));
  t.same(left.sort(), [`other.tmp-${dead}`, `vectors.f16.tmp-${process.pid}`].sort());
});

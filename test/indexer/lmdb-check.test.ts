/**
 * The look at an LMDB file before it is mapped (src/store/lmdb-check.ts): a sound file that ends short of its
 * meta page's last page number opens (LMDB does not write pages dirtied and freed in one transaction; a
 * 400,000-sentence build's store was refused so), and a file cut inside its trees is BAD_FILE.
 */
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { checkLmdbFile, SentenceStore } from '../../src/store/index.js';

const dir = mkdtempSync(join(tmpdir(), 'paramine-lmdb-check-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** A store of `n` sentences in batches, closed: its data file. */
async function store(n: number): Promise<string> {
  const d = join(dir, 'made');
  const s = SentenceStore.open(d);
  for (let id = 0; id < n; id += 1000) {
    const rows = Array.from({ length: Math.min(1000, n - id) }, (_, i) => {
      const text = `sentence ${id + i} of the check, with words enough to fill a page or two: ${'x'.repeat((id + i) % 90)}`;
      return { id: id + i, text, key: text.toLowerCase() };
    });
    await s.commit(rows, { progress: { id } });
  }
  await s.close();
  return join(d, 'data.mdb');
}

/** A copy of the store directory's data file, changed by `change`, in a directory of its own. */
function variant(file: string, name: string, change: (path: string) => void): string {
  const d = join(dir, name);
  mkdirSync(d);
  copyFileSync(file, join(d, 'data.mdb'));
  change(join(d, 'data.mdb'));
  return d;
}

/** Every meta page's last page number moved on by `pages` (what free pages left unwritten at the end look like). */
function pastTheEnd(pages: number) {
  return (path: string) => {
    const buf = readFileSync(path);
    const pageSize = buf.readUInt32LE(24 + 24);
    for (const at of [0, pageSize / 2, pageSize]) {
      if (buf.readUInt32LE(at + 24) !== 0xbeefc0de) continue;
      const last = at + 24 + 24 + 2 * 48;
      buf.writeBigUInt64LE(buf.readBigUInt64LE(last) + BigInt(pages), last);
    }
    writeFileSync(path, buf);
  };
}

t.test('a sound store that ends before its last page number opens and reads', async (t) => {
  const file = await store(20_000);
  const d = variant(file, 'short', pastTheEnd(10));
  t.doesNotThrow(() => checkLmdbFile(join(d, 'data.mdb')));
  const s = SentenceStore.open(d, { readOnly: true });
  t.equal(s.count, 20_000);
  t.match(s.get(19_999)?.text, /^sentence 19999 /);
  await s.close();
});

t.test('a store cut inside its trees is BAD_FILE, wherever the cut', async (t) => {
  const file = await store(20_000);
  const size = statSync(file).size;
  const pageSize = readFileSync(file).readUInt32LE(48);
  for (const keep of [
    size - 16 * pageSize,
    Math.floor(size / 2 / pageSize) * pageSize,
    2 * pageSize,
    pageSize,
  ]) {
    const d = variant(file, `cut-${keep}`, (p) => truncateSync(p, keep));
    t.throws(
      () => checkLmdbFile(join(d, 'data.mdb')),
      { code: 'BAD_FILE', message: /truncated/ },
      `${keep} of ${size}`,
    );
  }
});

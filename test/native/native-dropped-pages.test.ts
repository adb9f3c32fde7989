/**
 * dropMappedPages (src/native/mmap.cc): pages read through another library's map of a file (LMDB's, as
 * `docs align` reads its store) leave the process's resident set, and reading goes on as before.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import { statusKiB } from '../../bench/src/proc-status.js';
import { dropMappedPages, mapFile } from '../../src/native/index.js';

const linux = process.platform === 'linux';
const dir = mkdtempSync(join(tmpdir(), 'paramine-dropped-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** This process's resident pages mapped from files, in bytes (/proc/self/status). */
function rssFile(): number {
  return (statusKiB(['RssFile'])?.[0] ?? 0) * 1024;
}

t.test(
  'an LMDB map read whole lets go of its pages, and reads on',
  { skip: !linux && 'Linux only' },
  async (t) => {
    const store = join(dir, 'store');
    const n = 4000;
    const value = (i: number) => `${i}:`.padEnd(2048, String.fromCharCode(97 + (i % 26)));
    const w = open({ path: store });
    await w.transaction(() => {
      for (let i = 0; i < n; i++) w.put(i, value(i));
    });
    await w.close();
    const r = open({ path: store, readOnly: true });
    t.teardown(() => r.close());
    const readAll = () => {
      let bad = 0;
      for (let i = 0; i < n; i++) if (r.get(i) !== value(i)) bad++;
      return bad;
    };
    t.equal(readAll(), 0, 'every value read through the map');
    const before = rssFile();
    const advised = dropMappedPages(join(store, 'data.mdb'));
    const after = rssFile();
    t.ok(advised >= n * 2048, `the map advised: ${advised} bytes`);
    // ~8.4 MB of values were resident; at least most of them are gone.
    t.ok(before - after >= 0.6 * n * 2048, `file-backed RSS ${before} -> ${after} bytes`);
    t.equal(readAll(), 0, 'the same values read again, faulted in from the page cache');
    t.equal(dropMappedPages(join(store, 'missing.mdb')), 0, 'a file not there: nothing to drop');
  },
);

t.test(
  'a private writable map is left alone (a written page would lose its writes)',
  { skip: !linux && 'Linux only' },
  async (t) => {
    const path = join(dir, 'col.f32');
    writeFileSync(
      path,
      Float32Array.from({ length: 4096 }, (_, i) => i),
    );
    const mapped = mapFile(path) as ArrayBuffer;
    const view = new Float32Array(mapped);
    view[7] = -1;
    t.equal(dropMappedPages(path), 0, 'mapFile maps privately: not advised');
    t.equal(view[7], -1, "this process's write is still there");
  },
);

/**
 * Delete by metadata (a takedown of a source) scans the store in slices of SCAN_SLICE records and lets the
 * event loop go between them, so searches keep answering during it: over 9,000 built sentences the scan
 * yields at least twice, finds exactly the source's sentences (built and added), and deletes them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildIndex } from '../../src/indexer/build.js';
import { openService } from '../../src/service/index.js';
import { SCAN_SLICE } from '../../src/service/writes.js';
import { syntheticSentence } from '../helpers/corpus.js';

const MODEL = 'test/fixtures/tiny-encoder';
const N = 9000;
const dir = mkdtempSync(join(tmpdir(), 'paramine-writes-scan-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const rows = Array.from({ length: N }, (_, i) => ({
  text: `${syntheticSentence(i)} (${i})`,
  source: `s${i % 50}`,
}));
writeFileSync(join(dir, 'c.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n'));
await buildIndex({ inputs: [join(dir, 'c.jsonl')], out: join(dir, 'index'), model: MODEL, quiet: true });
const service = await openService({ index: join(dir, 'index'), model: MODEL, reranker: false });
t.teardown(() => service.close());

t.test('a takedown scans in slices, finds the source built and added, and deletes it', async (t) => {
  t.ok(N > 2 * SCAN_SLICE, 'the store spans three slices');
  const [added] = await service.writes.add([
    { text: 'A sentence the takedown must find too.', meta: { source: 's7' } },
  ]);
  let turns = 0;
  let scanning = true;
  const tick = () => {
    if (!scanning) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const found = await service.writes.matching({ source: 's7' });
  scanning = false;
  t.ok(turns >= 2, `the event loop turned ${turns} times during the scan`);
  const built = Array.from({ length: N }, (_, i) => i).filter((i) => i % 50 === 7);
  t.same(found, [...built, added?.id], 'every sentence of the source, built and added');
  const { deleted } = await service.writes.deleteWhere({ source: 's7' });
  t.equal(deleted, built.length + 1);
  t.same(await service.writes.matching({ source: 's7' }), [], 'none left');
});

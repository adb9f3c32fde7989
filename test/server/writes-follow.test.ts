/**
 * Writes made beside a running service (issue #30): `paramine add` and `paramine delete` (real CLI
 * processes) write to the index a service serves (in this process, following its updates as `paramine
 * serve` does); within a few seconds the service finds the added sentences, drops the deleted one, and
 * searches a segment the CLI sealed, each sentence once; its own writes go on from the next id.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { searchOptionsSchema } from '../../src/search/types.js';
import { runCli as cli } from '../helpers/cli.js';
import { NEWS as NEW, NEWS_PARAPHRASE as QUERY, syntheticSentence } from '../helpers/corpus.js';
import { startTestService } from '../helpers/service.js';

const s = await startTestService(200, false, { seal: { follow: true } });
t.teardown(() => s.close());

async function top(text: string, k = 10) {
  const r = await s.service.core.search([text], searchOptionsSchema.parse({ k, rerank: false }));
  return r.results[0]?.candidates ?? [];
}

/** Polls until `check` holds (the service looks every second). */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return Date.now() - t0;
}

t.test('paramine add / delete beside a running service: taken in without a restart', async (t) => {
  const base = s.service.store.count;
  const first = join(s.dir, 'first.txt');
  writeFileSync(
    first,
    `${[NEW, ...Array.from({ length: 29 }, (_, i) => syntheticSentence(700 + i))].join('\n')}\n`,
  );
  cli('add', '--index', s.index, '--input', first, '--quiet');
  const seen = await within(5000, async () => (await top(QUERY)).some((c) => c.id === base));
  t.pass(`the CLI's sentence is found ${seen} ms after it ended`);

  cli('delete', '--index', s.index, '--ids', String(base));
  await within(5000, async () => !(await top(QUERY, 50)).some((c) => c.id === base));
  t.pass('the CLI deletion is honoured');

  const second = join(s.dir, 'second.txt');
  writeFileSync(second, `${Array.from({ length: 40 }, (_, i) => syntheticSentence(800 + i)).join('\n')}\n`);
  cli('add', '--index', s.index, '--input', second, '--seal', '--quiet');
  await within(5000, async () => s.service.writes.stats.sealed.segments >= 1);
  const probe = syntheticSentence(815).replace('.', ' today.');
  const hits = await top(probe, 20);
  t.equal(hits[0]?.id, base + 30 + 15, 'a sentence in the segment the CLI sealed is found');
  t.equal(new Set(hits.map((c) => c.id)).size, hits.length, 'each sentence once');

  const [own] = await s.service.writes.add([{ text: 'A late headline about the harbour bridge reopening.' }]);
  t.equal(own?.id, base + 70, "the service's own write takes the next id");
  t.match(s.service.writes.stats, { added: 71, deleted: 1 });
});

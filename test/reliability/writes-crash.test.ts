/**
 * The crash test of writes while serving (issue #30), as Qdrant's: a client streams adds and deletes into
 * a real `paramine serve` (dist/cli.js, FAISS, LMDB, the tiny ONNX encoder) that is SIGKILLed at a random
 * moment, 12 times (20 before 2026-12-03; WRITES_CRASH_KILLS=N for more). After each restart every
 * acknowledged add is stored and searchable, every acknowledged delete is gone, and an add cut short by
 * the kill either exists whole (stored, searchable, its client id known) or not at all. The index's files pass their checksums at every start (serve verifies them).
 * The service seals every 100 added sentences, so kills also land while a segment is being sealed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { buildIndex } from '../../src/indexer/build.js';
import { spawnServe } from '../../src/testing/index.js';
import { syntheticSentence } from '../helpers/corpus.js';

const KILLS = Number(process.env.WRITES_CRASH_KILLS ?? 12);
const KEY = 'crash-writer-key-1';
const dir = mkdtempSync(join(tmpdir(), 'paramine-writes-crash-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const corpus = join(dir, 'base.txt');
writeFileSync(corpus, `${Array.from({ length: 300 }, (_, i) => syntheticSentence(i)).join('\n')}\n`);
const index = join(dir, 'index');
await buildIndex(
  { inputs: [corpus], out: index, model: 'test/fixtures/tiny-encoder', quiet: true },
  () => {},
);
const keys = join(dir, 'keys.txt');
writeFileSync(keys, `writer:${KEY}\n`);
const auth = { authorization: `Bearer ${KEY}` };
const headers = { ...auth, 'content-type': 'application/json' };

const start = () =>
  spawnServe([
    'dist/cli.js',
    'serve',
    '--index',
    index,
    '--model',
    'test/fixtures/tiny-encoder',
    '--no-reranker',
    '--api-keys-file',
    keys,
    // Seals often, so kills land during seals too (a segment written, recorded, swapped in).
    '--seal-at',
    '100',
  ]);

/** A text no other write uses: the n-th added sentence. */
const textOf = (n: number) =>
  `Added sentence number ${n} says the ${syntheticSentence(n * 7919 + 13).slice(4)}`;

interface Acked {
  adds: Map<string, { id: number; text: string }>;
  deletes: Set<number>;
  /** Deletes sent but not answered when the server died: done or not, both are right. */
  unsure: Set<number>;
}

/** Streams writes until the server dies; what was acknowledged, and the adds in flight when it died. */
async function stream(
  url: string,
  acked: Acked,
  next: { n: number },
): Promise<Array<{ clientId: string; text: string }>> {
  const inFlight = new Map<string, string>();
  const adder = async () => {
    for (;;) {
      const batch = Array.from({ length: 3 }, () => {
        const n = next.n++;
        return { text: textOf(n), id: `c${n}` };
      });
      for (const b of batch) inFlight.set(b.id, b.text);
      const res = await fetch(`${url}/v1/sentences`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ sentences: batch }),
      });
      if (res.status !== 200) throw new Error(`add: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { sentences: Array<{ id: number; clientId: string }> };
      body.sentences.forEach((s, i) => {
        acked.adds.set(s.clientId, { id: s.id, text: (batch[i] as { text: string }).text });
        inFlight.delete(s.clientId);
      });
    }
  };
  const deleter = async () => {
    for (;;) {
      const live = [...acked.adds.values()].filter(
        (a) => !acked.deletes.has(a.id) && !acked.unsure.has(a.id),
      );
      const victim = live[Math.floor(live.length / 2)];
      if (victim === undefined) {
        await new Promise((r) => setTimeout(r, 5));
        continue;
      }
      acked.unsure.add(victim.id);
      const res = await fetch(`${url}/v1/sentences/${victim.id}`, { method: 'DELETE', headers: auth });
      if (res.status !== 200) throw new Error(`delete: ${res.status} ${await res.text()}`);
      acked.unsure.delete(victim.id);
      acked.deletes.add(victim.id);
    }
  };
  await Promise.allSettled([adder(), deleter(), adder()]);
  return [...inFlight].map(([clientId, text]) => ({ clientId, text }));
}

async function found(url: string, id: number, text: string): Promise<boolean> {
  const res = await fetch(`${url}/v1/search`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ text, k: 10, rerank: false, excludeDuplicates: false }),
  });
  const body = (await res.json()) as { results: Array<{ candidates: Array<{ id: number }> }> };
  return body.results[0]?.candidates.some((c) => c.id === id) ?? false;
}

t.test(`adds and deletes survive ${KILLS} SIGKILLs`, async (t) => {
  const acked: Acked = { adds: new Map(), deletes: new Set(), unsure: new Set() };
  const next = { n: 0 };
  let half = 0;
  // Start 1 finds nothing; starts 2 to KILLS + 1 each check the writes made before the kill before it.
  for (let kill = 0; kill <= KILLS; kill++) {
    const serve = await start();
    // Everything acknowledged so far is there, and every add cut short earlier exists whole or not at all.
    const problems: string[] = [];
    // A delete the kill cut short happened or not, wholly: learn which.
    for (const id of acked.unsure) {
      if ((await fetch(`${serve.url}/v1/sentences/${id}`)).status === 404) acked.deletes.add(id);
    }
    acked.unsure.clear();
    for (const [clientId, a] of acked.adds) {
      const res = await fetch(`${serve.url}/v1/sentences/${a.id}`);
      if (acked.deletes.has(a.id)) {
        if (res.status !== 404) problems.push(`deleted ${a.id} is back (${res.status})`);
      } else if (res.status !== 200 || ((await res.json()) as { text: string }).text !== a.text) {
        problems.push(`acknowledged ${clientId} -> ${a.id} is missing (${res.status})`);
      }
    }
    // The latest adds (growing) and a spread of older ones (sealed by now).
    const live = [...acked.adds.values()].filter((a) => !acked.deletes.has(a.id));
    const step = Math.max(1, Math.floor(live.length / 20));
    const sample = [...live.slice(-10), ...live.filter((_, i) => i % step === 0)];
    for (const a of sample)
      if (!(await found(serve.url, a.id, a.text))) problems.push(`${a.id} is not searchable`);
    t.same(
      problems,
      [],
      `start ${kill + 1}: ${acked.adds.size} adds and ${acked.deletes.size} deletes acknowledged hold`,
    );
    if (kill === KILLS) {
      const updates = (
        (await (await fetch(`${serve.url}/v1/index`)).json()) as {
          updates: { sealed: { segments: number; sentences: number }; growing: number };
        }
      ).updates;
      t.ok(
        updates.sealed.segments > 0,
        `${updates.sealed.sentences} sentences in ${updates.sealed.segments} sealed segments, ${updates.growing} growing`,
      );
      await serve.stop();
      break;
    }

    const killer = setTimeout(() => serve.child.kill('SIGKILL'), 150 + Math.floor(Math.random() * 500));
    const cut = await stream(serve.url, acked, next);
    clearTimeout(killer);
    const exited = () => serve.child.exitCode !== null || serve.child.signalCode !== null;
    if (!exited()) await new Promise((r) => serve.child.once('exit', r));

    // The adds the kill cut short: whole or absent. A retry with the same client id tells which.
    if (cut.length > 0) {
      const probe = await start();
      for (const c of cut) {
        const res = await fetch(`${probe.url}/v1/sentences`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ sentences: [{ text: c.text, id: c.clientId }] }),
        });
        const s = ((await res.json()) as { sentences: Array<{ id: number; status: string }> })
          .sentences[0] as {
          id: number;
          status: string;
        };
        if (s.status === 'retried') {
          half++;
          const rec = await fetch(`${probe.url}/v1/sentences/${s.id}`);
          t.equal(rec.status, 200, `cut-short ${c.clientId} that exists is stored`);
          t.ok(await found(probe.url, s.id, c.text), `cut-short ${c.clientId} that exists is searchable`);
        } else t.equal(s.status, 'added', `cut-short ${c.clientId} did not exist`);
        acked.adds.set(c.clientId, { id: s.id, text: c.text });
      }
      await probe.stop();
    }
  }
  t.ok(
    acked.adds.size > 100,
    `${acked.adds.size} adds, ${acked.deletes.size} deletes, ${half} cut-short adds found whole`,
  );
});

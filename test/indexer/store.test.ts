import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SentenceStore } from '../../src/store/index.js';

t.test('sentences, dedup keys and state commit together and survive reopening', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'paramine-store-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = SentenceStore.open(dir);
  await store.commit(
    [
      { id: 0, text: 'A cat sat.', key: 'a cat sat' },
      { id: 1, text: 'Kissa istui.', key: 'kissa istui', meta: { group: 'paper-7' } },
    ],
    { build: { nextId: 2 } },
  );
  await store.commit([{ id: 2, text: 'Ω', key: 'ω' }], { build: { nextId: 3 } });
  t.equal(store.count, 3);
  await store.close();
  t.throws(() => store.get(0), { code: 'INDEX_CLOSED' });

  const ro = SentenceStore.open(dir, { readOnly: true });
  t.same(ro.get(1), { text: 'Kissa istui.', meta: { group: 'paper-7' } });
  t.same(ro.get(0), { text: 'A cat sat.' });
  t.equal(ro.get(3), undefined);
  t.same(await ro.getMany([2, 0, 9]), [{ text: 'Ω' }, { text: 'A cat sat.' }, undefined]);
  t.equal(ro.idForKey('kissa istui'), 1);
  t.equal(ro.idForKey('kissa  istui'), undefined);
  t.same(ro.getState('build'), { nextId: 3 });
  t.same(
    [...ro.range(1, 3)].map((r) => r.id),
    [1, 2],
  );
  await ro.close();
});

t.test('erase: text, metadata and dedup key gone for good, the id kept, idempotent', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'paramine-store-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = SentenceStore.open(dir);
  const keyOf = (text: string) => text.toLowerCase();
  await store.commit([
    { id: 0, text: 'Keep me.', key: 'keep me.' },
    { id: 1, text: 'Take me down.', key: 'take me down.', meta: { source: 'leak' } },
    { id: 2, text: 'Also keep.', key: 'also keep.' },
  ]);
  t.equal(await store.erase([1, 7], keyOf, { erased: 1 }), 1, 'an unknown id is passed over');
  t.equal(store.count, 3, 'the id stays taken');
  t.equal(store.get(1), undefined);
  t.same(await store.getMany([0, 1, 2]), [{ text: 'Keep me.' }, undefined, { text: 'Also keep.' }]);
  t.equal(store.idForKey('take me down.'), undefined, 'its dedup key is freed');
  t.equal(store.idForKey('keep me.'), 0);
  t.same(
    [...store.range(0, 3)].map((r) => r.record.text),
    ['Keep me.', '', 'Also keep.'],
    'ranges keep their positions',
  );
  t.equal(store.getState('erased'), 1, 'state written with it');
  t.equal(await store.erase([1], keyOf), 0, 'idempotent');
  await store.close();
});

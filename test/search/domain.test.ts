/**
 * Domains of an index on a small real index (tiny encoder, real LMDB): `domain add` with both methods,
 * the columns and domains.json, list / remove, the errors a user can cause, and a `domain add` killed
 * with SIGKILL (a real child process) that resumes to exactly the column of an uninterrupted run.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  addDomain,
  Domains,
  fitCombined,
  indexIdentity,
  putDomain,
  readDomains,
  removeDomain,
} from '../../src/domain/index.js';
import { Encoder } from '../../src/encode/index.js';
import { readManifest } from '../../src/index/index.js';
import { buildIndex } from '../../src/indexer/build.js';
import { mixedCorpus, scienceSentence } from '../helpers/domain-corpus.js';

const MODEL = 'test/fixtures/tiny-encoder';
const N = 1500;
const dir = mkdtempSync(join(tmpdir(), 'paramine-domain-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const corpus = mixedCorpus(N);
writeFileSync(join(dir, 'corpus.txt'), `${corpus.map((c) => c.text).join('\n')}\n`);
const index = join(dir, 'index');
await buildIndex({ inputs: [join(dir, 'corpus.txt')], out: index, model: MODEL, quiet: true });
const inDomain = join(dir, 'science.txt');
writeFileSync(inDomain, `${Array.from({ length: 300 }, (_, i) => scienceSentence(i * 11 + 3)).join('\n')}\n`);
const identity = indexIdentity(await readManifest(index));

/** Mean σ of the scientific and of the everyday sentences, and how many of each fall on the right side of 0. */
function separation(sigma: Float32Array) {
  let sci = 0;
  let gen = 0;
  let sciBelow = 0;
  let genAbove = 0;
  corpus.forEach((c, i) => {
    if (c.science) {
      sci += sigma[i]!;
      if (sigma[i]! < 0) sciBelow++;
    } else {
      gen += sigma[i]!;
      if (sigma[i]! >= 0) genAbove++;
    }
  });
  const nSci = corpus.filter((c) => c.science).length;
  return {
    sci: sci / nSci,
    gen: gen / (N - nSci),
    sciBelow: sciBelow / nSci,
    genAbove: genAbove / (N - nSci),
  };
}

t.test('ml: σ per sentence in a column, in-domain sentences below the change point', async (t) => {
  const r = await addDomain({ index, name: 'science', inDomain: [inDomain], order: 3, chunk: 128 });
  t.equal(r.resumed, false);
  const e = r.entry;
  t.equal(e.count, N);
  t.equal(e.index, identity);
  t.equal(e.training.general.sentences, 300, 'general sample as large as the in-domain text');
  t.same(e.files.models, ['in-domain.kn', 'general.kn']);
  const domains = new Domains(index, identity);
  const d = await domains.get('science');
  t.equal(d.sigma.count, N);
  const s = separation(d.sigma.toArray());
  t.ok(s.sci < s.gen, `mean σ science ${s.sci.toFixed(2)} < everyday ${s.gen.toFixed(2)}`);
  // The general sample comes from the index, a third of which is scientific: the general LM knows some
  // of it too, so the separation is one-sided (every everyday sentence above 0, most scientific below).
  t.ok(s.sciBelow > 0.6 && s.genAbove > 0.95, `separated at 0: ${JSON.stringify(s)}`);
  const below = d.sigma.toArray().filter((x) => x < 0).length / N;
  t.ok(Math.abs(e.changePoint.shareBelow - below) < 1e-12, 'manifest share below 0 = the column');
  t.ok(e.quantiles.p05 <= e.quantiles.p50 && e.quantiles.p50 <= e.quantiles.p95);
  // The scorer gives a text outside the index the same σ as its row.
  const scorer = await d.scorer();
  const again = scorer.score([corpus[0]!.text]);
  t.ok(Math.abs(again.sigma[0]! - d.sigma.get(0)) < 1e-6);
  // Weight = H_gen / H_in: above 1 exactly when σ < 0.
  t.equal(d.weight.get(0) > 1, d.sigma.get(0) < 0);
  // A fresh registry (a restarted service) reads the same rows.
  const fresh = await new Domains(index, identity).get('science');
  t.same(Array.from(fresh.sigma.toArray().subarray(0, 50)), Array.from(d.sigma.toArray().subarray(0, 50)));
});

t.test('embedding: logistic regression on the stored vectors, behind the same interface', async (t) => {
  const encoder = await Encoder.open(MODEL);
  t.teardown(() => encoder.close());
  const r = await addDomain({
    index,
    name: 'science-emb',
    inDomain: [inDomain],
    method: 'embedding',
    encoder,
  });
  t.equal(r.entry.unit, 'nats');
  const d = await new Domains(index, identity).get('science-emb');
  const s = separation(d.sigma.toArray());
  t.ok(s.sci < s.gen, `mean σ science ${s.sci.toFixed(2)} < everyday ${s.gen.toFixed(2)}`);
  const scorer = await d.scorer();
  t.equal(scorer.needsVectors, true);
  const v = await encoder.encode([corpus[3]!.text]);
  t.ok(Math.abs(scorer.score([corpus[3]!.text], v).sigma[0]! - d.sigma.get(3)) < 1e-3);
});

t.test('bad input gets a coded error', async (t) => {
  const empty = join(dir, 'empty.txt');
  writeFileSync(empty, '\n  \n');
  await t.rejects(addDomain({ index, name: 'x', inDomain: [empty] }), { code: 'BAD_INPUT' });
  await t.rejects(addDomain({ index, name: 'x', inDomain: [join(dir, 'missing.txt')] }), {
    code: 'FILE_NOT_FOUND',
  });
  await t.rejects(addDomain({ index, name: 'science', inDomain: [inDomain] }), { code: 'CONFLICT' });
  await t.rejects(addDomain({ index, name: '../up', inDomain: [inDomain] }));
  const domains = new Domains(index, identity);
  await t.rejects(domains.get('nope'), { code: 'NOT_FOUND' });
  await t.rejects(new Domains(index, 'another-build').get('science'), { code: 'CONFLICT' });
  await t.rejects(removeDomain(index, 'nope'), { code: 'NOT_FOUND' });
  const side = { sigma: 0, weight: 1 };
  t.throws(() => fitCombined([{ cosine: 0.9, a: side, b: side, positive: true }], { file: 'p.tsv' }), {
    code: 'BAD_INPUT',
  });
});

t.test('a killed domain add resumes where it stopped and writes the same column', async (t) => {
  const args = ['domain', 'add', '--index', index, '--in-domain', inDomain, '--order', '3', '--quiet'];
  const progressFile = join(index, 'domains', '.killed.building', 'progress.json');
  const child = spawn(
    process.execPath,
    [...process.execArgv, 'src/cli.ts', ...args, '--name', 'killed', '--chunk', '5'],
    {
      stdio: 'ignore',
    },
  );
  const exited = once(child, 'exit');
  let done = 0;
  for (let i = 0; i < 2000 && done < 100; i++) {
    await new Promise((r) => setTimeout(r, 10));
    done = await readFile(progressFile, 'utf8').then(
      (s) => (JSON.parse(s) as { done: number }).done,
      () => 0,
    );
  }
  child.kill('SIGKILL');
  const [code, signal] = await exited;
  t.equal(signal, 'SIGKILL', `killed (exit ${code})`);
  const left = JSON.parse(readFileSync(progressFile, 'utf8')) as { done: number };
  t.ok(left.done >= 100 && left.done < N, `killed after ${left.done} of ${N} sentences`);
  t.notOk((await readDomains(index)).killed, 'not listed while incomplete');

  const rerun = spawn(
    process.execPath,
    [...process.execArgv, 'src/cli.ts', ...args, '--name', 'killed', '--chunk', '5'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  rerun.stdout.on('data', (b) => {
    out += String(b);
  });
  const [rc] = await once(rerun, 'exit');
  t.equal(rc, 0);
  t.match(out, /\(resumed\)/);
  const killed = readFileSync(join(index, 'domains', 'killed', 'sigma.f32'));
  const whole = readFileSync(join(index, 'domains', 'science', 'sigma.f32'));
  t.ok(killed.equals(whole), 'byte-identical to the uninterrupted run (same LMs, same rows)');

  t.equal((await readDomains(index)).killed?.count, N, 'listed once complete');
  await removeDomain(index, 'killed');
  t.notOk((await readDomains(index)).killed);
});

t.test('a domain scored on another build of the index is refused', async (t) => {
  const all = await readDomains(index);
  await putDomain(index, { ...all.science!, name: 'stale', index: 'sha:old:1' });
  await t.rejects(new Domains(index, identity).get('stale'), { code: 'CONFLICT' });
});

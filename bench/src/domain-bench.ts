/**
 * `npm run lab -- domain`: Pavlick et al. (2015)'s experiment on our data (BENCHMARKS.md "Domain-specific
 * mining"): a general collection (MultiPIT_Auto tweets + MRPC news + both sides of ParaSCI-ACL val), an
 * in-domain sample (ParaSCI-ACL train sources, minus every sentence of the collection), and the val pairs as
 * the in-domain paraphrases to find. Mining jobs with no domain (General), M-L change point, M-L weighted,
 * the embedding method, and combined (fit on a labeled split kept out of the evaluation); precision / recall
 * of recovering the val pairs down each ranking, its area (AUC), an SVG like the paper's Figure 2.
 *
 *   npm run lab -- domain --work tmp/domain-bench --multipit 60000 --json out.json --svg out.svg
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { defineBenchmark, type Log } from '../../dist/bench/harness.js';
import { fitDomain } from '../../dist/cli/domain-command.js';
import { type LabeledPair, readPairs } from '../../dist/corpus/index.js';
import { addDomain, readDomains } from '../../dist/domain/index.js';
import { Encoder } from '../../dist/encode/index.js';
import { prng } from '../../dist/index/index.js';
import { buildIndex } from '../../dist/indexer/build.js';
import type { JobSpecInput } from '../../dist/jobs/index.js';
import { resolveModelDir } from '../../dist/models/resolve.js';
import { openService, type Service } from '../../dist/service/index.js';
import { dedupKey, normalize } from '../../dist/text/index.js';
import { prSvg } from './domain-figure.js';

const schema = z.object({
  work: z.string().min(1),
  data: z.string().min(1),
  multipit: z.coerce.number().int().min(2),
  model: z.string().min(1),
  k: z.coerce.number().int().min(1),
  fitShare: z.coerce.number().gt(0).lt(1),
});
type Options = z.output<typeof schema>;
type Mined = { key: string; score: number };
type Run = { pairs: Mined[]; seconds: number };

const lines = (p: string) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .map((l) => normalize(l))
    .filter(Boolean);
const key = (a: number, b: number) => (a < b ? `${a}:${b}` : `${b}:${a}`);

/** Writes collection.txt, in-domain.txt and general.txt into the work folder; returns the val pairs. */
async function prepareCorpus(o: Options, log: Log) {
  const val = await readPairs(join(o.data, 'parasci/acl/val.src'));
  const mrpc = await readPairs(join(o.data, 'mrpc/train.tsv'));
  const auto = await readPairs(join(o.data, 'multipit/auto/train.csv'));
  const multipit = auto.slice(0, o.multipit / 2);
  const collection = [
    ...new Set([...val, ...mrpc, ...multipit].flatMap((p) => [normalize(p.s1), normalize(p.s2)])),
  ];
  const inCollection = new Set(collection.map((s) => dedupKey(s)));
  const inDomain = [...new Set(lines(join(o.data, 'parasci/acl/train.src')))].filter(
    (s) => !inCollection.has(dedupKey(s)),
  );
  // The general sample: distinct MultiPIT_Auto sentences outside the collection, as many as the in-domain
  // ones. (A sample of the index itself, domain add's default, would here be three quarters of this small
  // collection: the general LM would have seen most sentences it scores, val pairs included.)
  const generalSample = [
    ...new Set(auto.slice(o.multipit / 2).flatMap((p) => [normalize(p.s1), normalize(p.s2)])),
  ]
    .filter((s) => !inCollection.has(dedupKey(s)))
    .slice(0, inDomain.length);
  writeFileSync(join(o.work, 'collection.txt'), `${collection.join('\n')}\n`);
  writeFileSync(join(o.work, 'in-domain.txt'), `${inDomain.join('\n')}\n`);
  writeFileSync(join(o.work, 'general.txt'), `${generalSample.join('\n')}\n`);
  log(
    `collection ${collection.length} sentences; in-domain ${inDomain.length}; general ${generalSample.length}`,
  );
  return { val, collection: collection.length, inDomain: inDomain.length };
}

/** The index of the collection and its two domains (kept when the work folder already has them). */
async function buildWithDomains(o: Options, log: Log) {
  const index = join(o.work, 'index');
  const t0 = performance.now();
  await buildIndex({
    inputs: [join(o.work, 'collection.txt')],
    out: index,
    model: o.model,
    resume: true,
    quiet: true,
  }).catch(async (e: unknown) => {
    if ((e as { code?: string }).code !== 'CONFLICT') throw e;
  });
  const buildSeconds = (performance.now() - t0) / 1000;
  const have = await readDomains(index);
  const files = { inDomain: [join(o.work, 'in-domain.txt')], general: [join(o.work, 'general.txt')] };
  const ml = have.ml === undefined ? await addDomain({ index, name: 'ml', ...files, log }) : undefined;
  const encoder = await Encoder.open(resolveModelDir(o.model));
  try {
    const emb =
      have.emb === undefined
        ? await addDomain({ index, name: 'emb', ...files, method: 'embedding', encoder, log })
        : undefined;
    return { index, buildSeconds, ml, emb };
  } finally {
    await encoder.close();
  }
}

/** Val pairs as id pairs, split into a fit part and an evaluation part. */
function splitVal(service: Service, val: readonly LabeledPair[], fitShare: number, rand: () => number) {
  const idOf = (t: string) => service.store.idForKey(dedupKey(normalize(t)));
  const fitKeys = new Set<string>();
  const evalKeys = new Set<string>();
  for (const p of val) {
    const a = idOf(p.s1);
    const b = idOf(p.s2);
    if (a === undefined || b === undefined || a === b) continue;
    (rand() < fitShare ? fitKeys : evalKeys).add(key(a, b));
  }
  for (const k of fitKeys) evalKeys.delete(k);
  return { fitKeys, evalKeys };
}

/** Runs one mining job to its end; its pairs keyed by id pair, scored by the domain score or the cosine. */
function miner(service: Service, o: Options, log: Log) {
  const { manager, store } = service.openJobs({ dir: join(o.work, `jobs-${Date.now()}`) });
  return async (name: string, spec: JobSpecInput): Promise<Run> => {
    const t = performance.now();
    const job = await manager.create({ k: o.k, batchSize: 512, ...spec });
    const done = await manager.wait(job.id, undefined, 1000);
    const pairs = [...store.pairs(done.id)].map(({ pair }) => ({
      key: key(pair.a.id as number, pair.b.id as number),
      score: pair.domain?.score ?? pair.cosine,
    }));
    const seconds = (performance.now() - t) / 1000;
    log(`${name}: ${pairs.length} pairs in ${seconds.toFixed(0)} s`);
    return { pairs, seconds };
  };
}

/** fit.tsv: the fit split's val pairs (positive) and mined pairs outside the val set (negative). */
async function writeFitFile(
  service: Service,
  work: string,
  split: { fitKeys: Set<string>; evalKeys: Set<string> },
  general: Run,
  rand: () => number,
): Promise<Set<string>> {
  const texts = async (k: string) => {
    const [a, b] = k.split(':').map(Number) as [number, number];
    const [ra, rb] = await service.store.getMany([a, b]);
    return [ra?.text ?? '', rb?.text ?? ''];
  };
  const allVal = new Set([...split.fitKeys, ...split.evalKeys]);
  const negatives = general.pairs.filter((p) => !allVal.has(p.key));
  const negPick = Array.from(
    { length: Math.min(negatives.length, 2 * split.fitKeys.size) },
    () => negatives[Math.floor(rand() * negatives.length)]!.key,
  );
  const rows = ['s1\ts2\tlabel'];
  for (const k of split.fitKeys) rows.push(`${(await texts(k)).join('\t')}\t1`);
  for (const k of negPick) rows.push(`${(await texts(k)).join('\t')}\t0`);
  writeFileSync(join(work, 'fit.tsv'), `${rows.join('\n')}\n`);
  return new Set([...split.fitKeys, ...negPick]);
}

/** Precision / recall down a ranking; AUC = Σ precision × Δrecall (step interpolation). */
function curve(pairs: readonly Mined[], excluded: Set<string>, evalKeys: Set<string>) {
  const ranked = pairs.filter((p) => !excluded.has(p.key)).sort((a, b) => b.score - a.score);
  const seen = new Set<string>();
  let tp = 0;
  let auc = 0;
  const points: Array<[number, number]> = [];
  ranked.forEach((p, i) => {
    if (seen.has(p.key)) return;
    seen.add(p.key);
    if (!evalKeys.has(p.key)) return;
    tp++;
    const precision = tp / (i + 1);
    auc += precision / evalKeys.size;
    points.push([tp / evalKeys.size, precision]);
  });
  // At most ~300 points per curve for the figure.
  const step = Math.max(1, Math.ceil(points.length / 300));
  const shown = points.filter((_, i) => i % step === 0 || i === points.length - 1);
  return { mined: ranked.length, found: tp, recall: tp / evalKeys.size, auc, points: shown };
}

/** The six mining runs of the paper's comparison, one after another. */
async function mineAll(mine: (name: string, spec: JobSpecInput) => Promise<Run>, general: Run) {
  return {
    General: general,
    'M-L change point': await mine('M-L change point', { domain: { name: 'ml', mode: 'subsample' } }),
    'M-L weighted': await mine('M-L weighted', { domain: { name: 'ml', mode: 'weighted' } }),
    'Embedding change point': await mine('Embedding change point', {
      domain: { name: 'emb', mode: 'subsample' },
    }),
    'Embedding weighted': await mine('Embedding weighted', { domain: { name: 'emb', mode: 'weighted' } }),
    Combined: await mine('Combined', { domain: { name: 'ml', mode: 'combined' } }),
  } satisfies Record<string, Run>;
}

type RunRow = {
  mined: number;
  found: number;
  recall: number;
  auc: number;
  relativeToGeneral: number;
  seconds: number;
};

function markdown(runs: Record<string, RunRow>): string {
  return [
    `| method | pairs mined | val pairs found | recall | AUC | vs General | mining time |`,
    `|---|---:|---:|---:|---:|---:|---:|`,
    ...Object.entries(runs).map(
      ([n, r]) =>
        `| ${n} | ${r.mined} | ${r.found} | ${(100 * r.recall).toFixed(1)}% | ${(100 * r.auc).toFixed(2)} | ${r.relativeToGeneral >= 0 ? '+' : ''}${(100 * r.relativeToGeneral).toFixed(1)}% | ${r.seconds.toFixed(0)} s |`,
    ),
    '',
  ].join('\n');
}

async function run(o: Options, log: Log) {
  mkdirSync(o.work, { recursive: true });
  const corpus = await prepareCorpus(o, log);
  const built = await buildWithDomains(o, log);
  const service = await openService({ index: built.index, reranker: false, model: o.model });
  const rand = prng(11);
  const split = splitVal(service, corpus.val, o.fitShare, rand);
  const mine = miner(service, o, log);
  let runs: Record<string, Run>;
  let fitExcluded: Set<string>;
  let combined: Awaited<ReturnType<typeof fitDomain>>;
  try {
    const general = await mine('General', {});
    fitExcluded = await writeFitFile(service, o.work, split, general, rand);
    combined = await fitDomain({
      index: built.index,
      name: 'ml',
      pairs: join(o.work, 'fit.tsv'),
      model: o.model,
    });
    runs = await mineAll(mine, general);
  } finally {
    await service.close();
  }
  const curves = Object.fromEntries(
    Object.entries(runs).map(([n, r]) => [
      n,
      { ...curve(r.pairs, fitExcluded, split.evalKeys), seconds: r.seconds },
    ]),
  );
  const base = curves.General!.auc;
  const rows: Record<string, RunRow> = Object.fromEntries(
    Object.entries(curves).map(([n, c]) => [
      n,
      {
        mined: c.mined,
        found: c.found,
        recall: c.recall,
        auc: c.auc,
        relativeToGeneral: c.auc / base - 1,
        seconds: c.seconds,
      },
    ]),
  );
  const domains = await readDomains(built.index);
  const result = {
    collection: corpus.collection,
    inDomainSample: corpus.inDomain,
    evalPairs: split.evalKeys.size,
    fitPairs: { positives: split.fitKeys.size, negatives: fitExcluded.size - split.fitKeys.size },
    changePoint: Object.fromEntries(
      Object.entries(domains).map(([n, e]) => [
        n,
        { shareBelow: e.changePoint.shareBelow, p50: e.quantiles.p50 },
      ]),
    ),
    model: o.model,
    k: o.k,
    buildSeconds: built.buildSeconds,
    domainAdd: {
      ml: built.ml && {
        trainMs: built.ml.trainMs,
        scoreMs: built.ml.scoreMs,
        sentencesPerSecond: corpus.collection / (built.ml.scoreMs / 1000),
      },
      emb: built.emb && { trainMs: built.emb.trainMs, scoreMs: built.emb.scoreMs },
    },
    combined: { features: combined.features, weights: combined.weights, training: combined.training },
    runs: rows,
  };
  return { result, markdown: markdown(rows), svg: prSvg(curves) };
}

export const domain = defineBenchmark({
  name: 'domain',
  description: 'Moore–Lewis / embedding / combined domain mining vs General on ParaSCI-ACL val (P/R, AUC)',
  options: (cmd) =>
    cmd
      .option('--work <dir>', 'work folder (index, domains, jobs; reused when present)', 'tmp/domain-bench')
      .option('--data <dir>', 'the shared data folder', '../shared/data')
      .option(
        '--multipit <n>',
        'MultiPIT_Auto pairs in the collection (x 1/2) and for the general sample',
        '60000',
      )
      .option('--model <name>', 'sentence encoder', 'all-minilm-l6-v2-q')
      .option('--k <n>', 'neighbours per sentence in the mining jobs', '10')
      .option('--fit-share <r>', 'share of val pairs used to fit the combined model', '0.3'),
  schema,
  figure: true,
  run,
});

/**
 * Pavlick et al. (2015)'s experiment on our data (BENCHMARKS.md "Domain-specific mining"): a general
 * collection (MultiPIT_Auto tweets + MRPC news + both sides of ParaSCI-ACL val), an in-domain sample
 * (ParaSCI-ACL train sources, minus every sentence of the collection), and the val pairs as the in-domain
 * paraphrases to find. Mining jobs with no domain (General), M-L change point, M-L weighted, the embedding
 * method (change point), and combined (fit on a labeled split kept out of the evaluation); precision /
 * recall of recovering the val pairs down each ranking, its area (AUC), an SVG like the paper's Figure 2.
 *
 *   node dist/bench/domain-bench.js --work tmp/domain-bench --multipit 60000 --json out.json --svg out.svg
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readPairs } from '../corpus/index.js';
import { addDomain, readDomains } from '../domain/index.js';
import { Encoder } from '../encode/index.js';
import { prng } from '../index/index.js';
import { buildIndex } from '../indexer/build.js';
import type { JobSpecInput } from '../jobs/index.js';
import { resolveModelDir } from '../models/resolve.js';
import { fitDomain } from '../service/domain-command.js';
import { openService } from '../service/index.js';
import { dedupKey, normalize } from '../text/index.js';
import { el, svgDocument, text } from './svg.js';

const { values: o } = parseArgs({
  options: {
    work: { type: 'string', default: 'tmp/domain-bench' },
    data: { type: 'string', default: '../shared/data' },
    multipit: { type: 'string', default: '60000' },
    model: { type: 'string', default: 'all-minilm-l6-v2-q' },
    k: { type: 'string', default: '10' },
    'fit-share': { type: 'string', default: '0.3' },
    json: { type: 'string' },
    md: { type: 'string' },
    svg: { type: 'string' },
  },
});
const work = o.work as string;
const data = o.data as string;
mkdirSync(work, { recursive: true });
const log = (s: string) => process.stderr.write(`[domain-bench] ${s}\n`);
const lines = (p: string) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .map((l) => normalize(l))
    .filter(Boolean);

// 1. The collection and the in-domain sample.
const val = await readPairs(join(data, 'parasci/acl/val.src'));
const mrpc = await readPairs(join(data, 'mrpc/train.tsv'));
const multipit = (await readPairs(join(data, 'multipit/auto/train.csv'))).slice(0, Number(o.multipit) / 2);
const collection = [
  ...new Set([...val, ...mrpc, ...multipit].flatMap((p) => [normalize(p.s1), normalize(p.s2)])),
];
const inCollection = new Set(collection.map((s) => dedupKey(s)));
const inDomain = [...new Set(lines(join(data, 'parasci/acl/train.src')))].filter(
  (s) => !inCollection.has(dedupKey(s)),
);
// The general sample: distinct MultiPIT_Auto sentences outside the collection, as many as the in-domain
// ones. (A sample of the index itself, domain add's default, would here be three quarters of this small
// collection: the general LM would have seen most sentences it scores, val pairs included.)
const rest = (await readPairs(join(data, 'multipit/auto/train.csv'))).slice(Number(o.multipit) / 2);
const generalSample = [...new Set(rest.flatMap((p) => [normalize(p.s1), normalize(p.s2)]))]
  .filter((s) => !inCollection.has(dedupKey(s)))
  .slice(0, inDomain.length);
writeFileSync(join(work, 'collection.txt'), `${collection.join('\n')}\n`);
writeFileSync(join(work, 'in-domain.txt'), `${inDomain.join('\n')}\n`);
writeFileSync(join(work, 'general.txt'), `${generalSample.join('\n')}\n`);
log(
  `collection ${collection.length} sentences; in-domain sample ${inDomain.length}; general ${generalSample.length}`,
);

// 2. Index, domains.
const index = join(work, 'index');
const t0 = performance.now();
await buildIndex({
  inputs: [join(work, 'collection.txt')],
  out: index,
  model: o.model as string,
  resume: true,
  quiet: true,
}).catch(async (e: unknown) => {
  if ((e as { code?: string }).code !== 'CONFLICT') throw e;
});
const buildS = (performance.now() - t0) / 1000;
const have = await readDomains(index);
const inFiles = { inDomain: [join(work, 'in-domain.txt')], general: [join(work, 'general.txt')] };
const ml = have.ml === undefined ? await addDomain({ index, name: 'ml', ...inFiles, log }) : undefined;
const encoder = await Encoder.open(resolveModelDir(o.model as string));
const emb =
  have.emb === undefined
    ? await addDomain({
        index,
        name: 'emb',
        ...inFiles,
        method: 'embedding',
        encoder,
        log,
      })
    : undefined;
await encoder.close();

// 3. Ground truth: val pairs as id pairs, split into a fit part and an evaluation part.
const service = await openService({ index, reranker: false, model: o.model as string });
const idOf = (t: string) => service.store.idForKey(dedupKey(normalize(t)));
const key = (a: number, b: number) => (a < b ? `${a}:${b}` : `${b}:${a}`);
const rand = prng(11);
const fitKeys = new Set<string>();
const evalKeys = new Set<string>();
for (const p of val) {
  const a = idOf(p.s1);
  const b = idOf(p.s2);
  if (a === undefined || b === undefined || a === b) continue;
  (rand() < Number(o['fit-share']) ? fitKeys : evalKeys).add(key(a, b));
}
for (const k of fitKeys) evalKeys.delete(k);

// 4. Mining jobs.
const { manager, store } = service.openJobs({ dir: join(work, `jobs-${Date.now()}`) });
type Mined = { key: string; score: number };
async function mine(name: string, spec: JobSpecInput): Promise<{ pairs: Mined[]; seconds: number }> {
  const t = performance.now();
  const job = await manager.create({ k: Number(o.k), batchSize: 512, ...spec });
  const done = await manager.wait(job.id, undefined, 1000);
  const pairs = [...store.pairs(done.id)].map(({ pair }) => ({
    key: key(pair.a.id as number, pair.b.id as number),
    score: pair.domain?.score ?? pair.cosine,
  }));
  const seconds = (performance.now() - t) / 1000;
  log(`${name}: ${pairs.length} pairs in ${seconds.toFixed(0)} s`);
  return { pairs, seconds };
}
const general = await mine('General', {});
// The labeled fit file: the fit split's val pairs (positive) and mined pairs outside the val set (negative).
const texts = async (k: string) => {
  const [a, b] = k.split(':').map(Number) as [number, number];
  const [ra, rb] = await service.store.getMany([a, b]);
  return [ra?.text ?? '', rb?.text ?? ''];
};
const allVal = new Set([...fitKeys, ...evalKeys]);
const negatives = general.pairs.filter((p) => !allVal.has(p.key));
const negPick = Array.from(
  { length: Math.min(negatives.length, 2 * fitKeys.size) },
  () => negatives[Math.floor(rand() * negatives.length)]!.key,
);
const fitRows = ['s1\ts2\tlabel'];
for (const k of fitKeys) fitRows.push(`${(await texts(k)).join('\t')}\t1`);
for (const k of negPick) fitRows.push(`${(await texts(k)).join('\t')}\t0`);
writeFileSync(join(work, 'fit.tsv'), `${fitRows.join('\n')}\n`);
const fitExcluded = new Set([...fitKeys, ...negPick]);
const combinedModel = await fitDomain({
  index,
  name: 'ml',
  pairs: join(work, 'fit.tsv'),
  model: o.model as string,
});

const runs: Record<string, { pairs: Mined[]; seconds: number }> = {
  General: general,
  'M-L change point': await mine('M-L change point', { domain: { name: 'ml', mode: 'subsample' } }),
  'M-L weighted': await mine('M-L weighted', { domain: { name: 'ml', mode: 'weighted' } }),
  'Embedding change point': await mine('Embedding change point', {
    domain: { name: 'emb', mode: 'subsample' },
  }),
  'Embedding weighted': await mine('Embedding weighted', { domain: { name: 'emb', mode: 'weighted' } }),
  Combined: await mine('Combined', { domain: { name: 'ml', mode: 'combined' } }),
};
await service.close();

// 5. Precision / recall down each ranking; AUC = Σ precision × Δrecall (step interpolation).
function curve(pairs: Mined[]) {
  const ranked = pairs.filter((p) => !fitExcluded.has(p.key)).sort((a, b) => b.score - a.score);
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
const curves = Object.fromEntries(
  Object.entries(runs).map(([n, r]) => [n, { ...curve(r.pairs), seconds: r.seconds }]),
);
const base = curves.General!.auc;
const result = {
  collection: collection.length,
  inDomainSample: inDomain.length,
  evalPairs: evalKeys.size,
  fitPairs: { positives: fitKeys.size, negatives: negPick.length },
  changePoint: Object.fromEntries(
    Object.entries(await readDomains(index)).map(([n, e]) => [
      n,
      { shareBelow: e.changePoint.shareBelow, p50: e.quantiles.p50 },
    ]),
  ),
  model: o.model,
  k: Number(o.k),
  buildSeconds: buildS,
  domainAdd: {
    ml: ml && {
      trainMs: ml.trainMs,
      scoreMs: ml.scoreMs,
      sentencesPerSecond: collection.length / (ml.scoreMs / 1000),
    },
    emb: emb && { trainMs: emb.trainMs, scoreMs: emb.scoreMs },
  },
  combined: {
    features: combinedModel.features,
    weights: combinedModel.weights,
    training: combinedModel.training,
  },
  runs: Object.fromEntries(
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
  ),
};
const md = [
  `| method | pairs mined | val pairs found | recall | AUC | vs General | mining time |`,
  `|---|---:|---:|---:|---:|---:|---:|`,
  ...Object.entries(result.runs).map(
    ([n, r]) =>
      `| ${n} | ${r.mined} | ${r.found} | ${(100 * r.recall).toFixed(1)}% | ${(100 * r.auc).toFixed(2)} | ${r.relativeToGeneral >= 0 ? '+' : ''}${(100 * r.relativeToGeneral).toFixed(1)}% | ${r.seconds.toFixed(0)} s |`,
  ),
  '',
].join('\n');
if (o.json) writeFileSync(o.json, `${JSON.stringify(result, null, 2)}\n`);
if (o.md) writeFileSync(o.md, md);
if (o.svg) writeFileSync(o.svg, prSvg(curves));
process.stdout.write(md);

function prSvg(cs: Record<string, { points: Array<[number, number]>; auc: number }>): string {
  const W = 640;
  const H = 420;
  const L = 60;
  const T = 30;
  const PW = 420;
  const PH = 330;
  const colors = ['#444', '#1f77b4', '#2ca02c', '#ff7f0e', '#9467bd', '#d62728'];
  const maxR = Math.max(0.01, ...Object.values(cs).flatMap((c) => c.points.map((p) => p[0])));
  const x = (r: number) => L + (r / maxR) * PW;
  const y = (p: number) => T + (1 - p) * PH;
  const parts: string[] = [
    el('rect', { x: L, y: T, width: PW, height: PH, fill: 'none', stroke: '#999' }),
    text('recall of ParaSCI-ACL val pairs', {
      x: L + PW / 2,
      y: H - 10,
      'text-anchor': 'middle',
      'font-size': 12,
    }),
    text('precision', {
      x: 14,
      y: T + PH / 2,
      transform: `rotate(-90 14 ${T + PH / 2})`,
      'text-anchor': 'middle',
      'font-size': 12,
    }),
  ];
  for (let i = 0; i <= 4; i++) {
    parts.push(
      text((i / 4).toFixed(2), { x: L - 6, y: y(i / 4) + 4, 'text-anchor': 'end', 'font-size': 10 }),
    );
    parts.push(
      text(((i / 4) * maxR).toFixed(2), {
        x: x((i / 4) * maxR),
        y: T + PH + 14,
        'text-anchor': 'middle',
        'font-size': 10,
      }),
    );
  }
  Object.entries(cs).forEach(([name, c], i) => {
    const d = c.points
      .map(([r, p], j) => `${j === 0 ? 'M' : 'L'}${x(r).toFixed(1)},${y(p).toFixed(1)}`)
      .join('');
    const color = colors[i % colors.length] as string;
    if (d) parts.push(el('path', { d, fill: 'none', stroke: color, 'stroke-width': 1.5 }));
    parts.push(el('rect', { x: L + PW + 12, y: T + 6 + i * 20, width: 12, height: 3, fill: color }));
    parts.push(
      text(`${name} (AUC ${(100 * c.auc).toFixed(1)})`, {
        x: L + PW + 28,
        y: T + 11 + i * 20,
        'font-size': 10,
      }),
    );
  });
  return svgDocument(
    W + 120,
    H,
    parts,
    'Precision / recall of in-domain paraphrases (ParaSCI-ACL val) among mined pairs',
  );
}

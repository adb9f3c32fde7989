/**
 * `paramine domain add | list | remove | fit`: the domains of an index (see src/domain/). `fit` needs
 * the encoder and, optionally, the cross-encoder, which is why the command lives with the composition
 * root rather than in the domain stage.
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { readPairs } from '../corpus/index.js';
import {
  addDomain,
  DOMAIN_ADD_DEFAULTS,
  Domains,
  type FitExample,
  fitCombined,
  indexIdentity,
  putDomain,
  readDomains,
  removeDomain,
  sideScores,
} from '../domain/index.js';
import { Encoder } from '../encode/index.js';
import { ParamineError } from '../errors.js';
import { readManifest } from '../index/index.js';
import { resolveModelDir } from '../models/resolve.js';
import { formatDuration } from '../progress.js';
import { CrossEncoder } from '../rerank/index.js';
import { SentenceStore, STORE_DIR } from '../store/index.js';
import { dedupKey, normalize } from '../text/index.js';
import { detectScheme, positiveProbability } from '../text/labels.js';
import { parseInput } from '../validate.js';

const int = (v: string) => Number.parseInt(v, 10);
const D = DOMAIN_ADD_DEFAULTS;

const addFlags = z.object({
  index: z.string().min(1),
  name: z.string().min(1),
  inDomain: z.array(z.string().min(1)).min(1),
  general: z.array(z.string().min(1)).optional(),
  order: z.number().int().min(1).max(8),
  method: z.enum(['ml', 'embedding']),
  minCount: z.number().int().min(1),
  seed: z.number().int(),
  chunk: z.number().int().min(1),
  replace: z.boolean(),
  quiet: z.boolean(),
});

/** The index's own encoder, checked against its manifest. */
async function indexEncoder(index: string, model?: string): Promise<Encoder> {
  const manifest = await readManifest(index);
  const encoder = await Encoder.open(resolveModelDir(model ?? manifest.model.id));
  if (encoder.onnxSha256 !== manifest.model.sha256) {
    await encoder.close();
    throw new ParamineError(
      'MODEL_MISMATCH',
      `${index} was built with another graph of ${manifest.model.id} (sha256 differs)`,
    );
  }
  return encoder;
}

export function register(program: Command): void {
  const domain = program
    .command('domain')
    .description(
      'domain scores of an index: Moore–Lewis LMs or an embedding classifier (add, list, remove, fit)',
    );
  addCommand(domain);
  listCommand(domain);
  removeCommand(domain);
  fitCommand(domain);
}

function addCommand(domain: Command): void {
  domain
    .command('add')
    .description(
      'train a domain and score every sentence of the index (resumable: run it again after a kill)',
    )
    .requiredOption('--index <dir>', 'index directory')
    .requiredOption('--name <name>', 'domain name (letters, digits, . _ -)')
    .requiredOption(
      '--in-domain <files...>',
      'in-domain sample: .txt, .jsonl, .tsv/.csv corpus files (.gz too)',
    )
    .option('--general <files...>', 'general sample (default: a uniform sample of the index as large)')
    .option('--order <n>', 'n-gram order of the Kneser–Ney LMs', int, D.order)
    .option('--method <ml|embedding>', 'Moore–Lewis LMs, or logistic regression on the embeddings', D.method)
    .option('--min-count <n>', 'in-domain words seen fewer times become <unk>', int, D.minCount)
    .option('--seed <n>', 'seed of the general sample', int, D.seed)
    .option('--chunk <n>', 'sentences per checkpoint', int, D.chunk)
    .option('--replace', 'replace a domain of that name', false)
    .option('--quiet', 'no progress output', false)
    .action(async (raw: Record<string, unknown>) => {
      const o = parseInput(addFlags, raw, 'flags');
      const encoder = o.method === 'embedding' ? await indexEncoder(o.index) : undefined;
      try {
        const r = await addDomain({
          ...o,
          encoder,
          progress: { quiet: o.quiet },
          log: (l) => process.stderr.write(`${l}\n`),
        });
        const e = r.entry;
        process.stdout.write(
          [
            `domain ${e.name} (${e.method}) on ${e.count} sentences${r.resumed ? ' (resumed)' : ''}`,
            `  trained in ${formatDuration(r.trainMs / 1000)}, scored in ${formatDuration(r.scoreMs / 1000)}`,
            `  σ (${e.unit}): p05 ${e.quantiles.p05.toFixed(3)}, median ${e.quantiles.p50.toFixed(3)}, p95 ${e.quantiles.p95.toFixed(3)}`,
            `  change point σ = 0 keeps ${(100 * e.changePoint.shareBelow).toFixed(1)}% of the index`,
            '',
          ].join('\n'),
        );
      } finally {
        await encoder?.close();
      }
    });
}

function listCommand(domain: Command): void {
  domain
    .command('list')
    .description('the domains of an index')
    .requiredOption('--index <dir>', 'index directory')
    .option('--json', 'print domains.json entries as JSON', false)
    .action(async (o: { index: string; json: boolean }) => {
      const identity = indexIdentity(await readManifest(o.index));
      const all = Object.values(await readDomains(o.index));
      if (o.json) {
        const rows = all.map(({ quantileTable: _, ...e }) => ({ ...e, current: e.index === identity }));
        process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      if (all.length === 0) process.stdout.write('no domains\n');
      for (const e of all) {
        process.stdout.write(
          `${e.name}\t${e.method}\t${e.count} sentences\tmedian σ ${e.quantiles.p50.toFixed(3)}\t` +
            `${(100 * e.changePoint.shareBelow).toFixed(1)}% below 0\t${e.combined ? 'combined fit' : 'no fit'}` +
            `${e.index === identity ? '' : '\tSTALE (index rebuilt)'}\n`,
        );
      }
    });
}

function removeCommand(domain: Command): void {
  domain
    .command('remove')
    .description('remove a domain and its files')
    .requiredOption('--index <dir>', 'index directory')
    .requiredOption('--name <name>', 'domain name')
    .action(async (o: { index: string; name: string }) => {
      await removeDomain(o.index, o.name);
      process.stdout.write(`removed domain ${o.name}\n`);
    });
}

function fitCommand(domain: Command): void {
  domain
    .command('fit')
    .description('fit the combined score (cosine, reranker probability, σ of both sides) on labeled pairs')
    .requiredOption('--index <dir>', 'index directory')
    .requiredOption('--name <name>', 'domain name')
    .requiredOption('--pairs <file>', 'labeled pairs: .tsv/.csv (s1, s2, label), .json/.jsonl')
    .option('--reranker <name|dir>', 'add the cross-encoder probability as a feature')
    .option(
      '--positive <labels...>',
      'labels that count as an in-domain paraphrase (default: from the scheme)',
    )
    .action(
      async (o: { index: string; name: string; pairs: string; reranker?: string; positive?: string[] }) => {
        const model = await fitDomain(o);
        process.stdout.write(
          `fit domain ${o.name}: ${model.pairs.positives} positive / ${model.pairs.negatives} negative pairs, ` +
            `training accuracy ${(100 * model.training.accuracy).toFixed(1)}%\n` +
            model.features.map((f, i) => `  ${f}: ${model.weights[i]?.toFixed(4)} (per std)\n`).join(''),
        );
      },
    );
}

/** Features of every labeled pair, the fit, and the model stored in the domain's entry. */
export async function fitDomain(o: {
  index: string;
  name: string;
  pairs: string;
  reranker?: string | undefined;
  positive?: string[] | undefined;
  /** The index's encoder by name or directory (default: the manifest's model id). */
  model?: string | undefined;
}) {
  const manifest = await readManifest(o.index);
  const identity = indexIdentity(manifest);
  const domains = new Domains(o.index, identity);
  const domain = await domains.get(o.name, 'name');
  const pairs = await readPairs(o.pairs);
  const scheme = detectScheme(
    pairs.map((p) => p.label),
    o.positive ? { positive: o.positive } : {},
  );
  const store = SentenceStore.open(join(o.index, STORE_DIR), { readOnly: true });
  const encoder = await indexEncoder(o.index, o.model);
  const reranker = o.reranker ? await CrossEncoder.open(resolveModelDir(o.reranker, 'reranker')) : undefined;
  try {
    const a = pairs.map((p) => normalize(p.s1));
    const b = pairs.map((p) => normalize(p.s2));
    const [va, vb] = [await encoder.encode(a), await encoder.encode(b)];
    const d = encoder.dim;
    const idOf = (t: string) => store.idForKey(dedupKey(t)) ?? null;
    const sa = await sideScores(domain, a.map(idOf), a, va);
    const sb = await sideScores(domain, b.map(idOf), b, vb);
    const probs = reranker
      ? (await reranker.score(a.map((t, i) => [t, b[i] as string] as const))).map((s) =>
          positiveProbability(s.probabilities, reranker.positiveLabels),
        )
      : undefined;
    const examples: FitExample[] = pairs.flatMap((p, i) => {
      const positive = scheme.isPositive(p.label);
      if (positive === undefined) return [];
      let cosine = 0;
      for (let j = 0; j < d; j++) cosine += va[i * d + j]! * vb[i * d + j]!;
      return [{ cosine, rerankProbability: probs?.[i], a: sa[i]!, b: sb[i]!, positive }];
    });
    const model = fitCombined(examples, {
      file: o.pairs,
      reranker: reranker ? { id: reranker.modelId, sha256: reranker.onnxSha256 } : undefined,
    });
    const entry = (await readDomains(o.index))[o.name];
    if (entry === undefined) throw new ParamineError('NOT_FOUND', `domain ${o.name} disappeared`);
    await putDomain(o.index, { ...entry, combined: model });
    return model;
  } finally {
    await reranker?.close();
    await encoder.close();
    await store.close();
  }
}

/**
 * `paramine annotations report|threshold`: what the web page's annotations say about the cross-encoder
 * (the same report as GET /v1/annotations/report), and a copy of the cross-encoder for one index whose
 * label cut is the one with the best F1 on those annotations (with `--calibrate`, on a label calibration fitted
 * on them).
 */
import { copyFile, link, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import {
  type Annotation,
  type AnnotationReport,
  AnnotationStore,
  annotationReport,
  bestModelCut,
  composePlatt,
  crossFitted,
  fitPlatt,
  modelScores,
  recalibrated,
  reliability,
  rescaleRanking,
  type Scored,
} from '../annotations/index.js';
import { addFlags, cli } from '../config.js';
import { writeFileAtomic } from '../durable.js';
import { ParamineError } from '../errors.js';
import { ConfigSchema } from '../models/dir.js';
import { resolveModelDir } from '../models/resolve.js';
import { DEFAULT_RERANKER } from '../service/index.js';
import { parseInput } from '../validate.js';

const common = z.object({
  index: z.string().min(1),
  annotationsDir: z.string().min(1).optional(),
  url: z.string().url().optional(),
});

/** Every annotation of the index's store, read whole (the store is closed before the caller goes on). */
async function storedAnnotations(o: z.output<typeof common>): Promise<Annotation[]> {
  const store = AnnotationStore.open(o.annotationsDir ?? join(o.index, 'annotations'));
  try {
    return [...store.list()];
  } finally {
    await store.close();
  }
}

/** The report from a running service (--url), else from the store (`stored`, when the caller read it already). */
async function report(o: z.output<typeof common>, stored?: Annotation[]): Promise<AnnotationReport> {
  if (o.url !== undefined) {
    const res = await fetch(new URL('/v1/annotations/report', o.url));
    if (!res.ok)
      throw new ParamineError('UNAVAILABLE', `${o.url}: GET /v1/annotations/report answered ${res.status}`);
    return (await res.json()) as AnnotationReport;
  }
  return annotationReport(stored ?? (await storedAnnotations(o)));
}

/** Copies a model directory (hard links where the file system allows: graphs are large and never edited). */
async function copyModel(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const name of await readdir(from)) {
    const src = join(from, name);
    if ((await stat(src)).isDirectory()) await copyModel(src, join(to, name));
    else if (name !== 'config.json')
      await link(src, join(to, name)).catch(() => copyFile(src, join(to, name)));
  }
}

/** The options `threshold` adds, declared once with their flags (src/config.ts). */
const thresholdFlags = z.object({
  reranker: z.string().min(1).default(DEFAULT_RERANKER).register(cli, {
    flag: '--reranker <name|dir>',
    description: 'the cross-encoder the annotations were made with',
  }),
  out: z.string().min(1).optional().register(cli, {
    flag: '--out <dir>',
    description: 'where the copy goes (default: INDEX/rerankers/NAME)',
  }),
  minPairs: z.coerce.number().int().min(1).default(50).register(cli, {
    flag: '--min-pairs <n>',
    description: 'fewest annotated pairs to choose a cut from',
  }),
  calibrate: z.boolean().default(false).register(cli, {
    flag: '--calibrate',
    description:
      "also fit what P(paraphrase) means on these annotations (Platt scaling on top of the model's label calibration; binary models, from the store, not --url) and choose the cut on that scale",
  }),
});
const thresholdOptions = common.extend(thresholdFlags.shape);

async function threshold(raw: Record<string, unknown>): Promise<void> {
  const o = parseInput(thresholdOptions, raw, 'options');
  if (o.calibrate && o.url !== undefined)
    throw new ParamineError('BAD_INPUT', '--calibrate reads the annotation store itself: drop --url', {
      field: 'url',
    });
  // --calibrate fits on the pairs themselves: one read of the store serves the report and the fit
  const stored = o.calibrate ? await storedAnnotations(o) : undefined;
  const r = await report(o, stored);
  if (r.best.model === undefined || r.withProbability < o.minPairs) {
    throw new ParamineError(
      'BAD_INPUT',
      `only ${r.withProbability} judged pairs carry the model's probabilities (need ${o.minPairs}, --min-pairs): annotate more from search results first`,
    );
  }
  const dir = resolveModelDir(o.reranker, 'reranker');
  const out = o.out ?? join(o.index, 'rerankers', basename(dir));
  const config = ConfigSchema.parse(JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')));
  const paramine = { ...(config.paramine ?? {}) };
  const fitted = stored ? calibrateOn(o, paramine, oneScale(stored, basename(dir))) : undefined;
  const best = fitted?.best ?? r.best.model;
  // The annotations store the probability the page showed: the reported one (label-calibrated where the model
  // has a label calibration), which is the scale `paramine.threshold` is on. (The rerank order's calibration
  // takes no cut: a threshold written into it, as before 2026-12-01, was never read.)
  paramine.threshold = best.threshold;
  await copyModel(dir, out);
  await writeFileAtomic(join(out, 'config.json'), `${JSON.stringify({ ...config, paramine }, null, 2)}\n`);
  process.stdout.write(
    (fitted ? `${fitted.said}\n` : '') +
      `${out}: label cut ${best.threshold} (F1 ${best.f1}, precision ${best.precision}, recall ${best.recall} on ` +
      `${r.withProbability} annotated pairs; cosine alone at best F1 ${r.best.cosine?.f1 ?? '-'})\n` +
      `serve it with: paramine serve --index ${o.index} --reranker ${out}\n`,
  );
}

/**
 * The annotations whose probabilities are on the model's scale: those it labeled (`model` = its name), and
 * those from before annotations named a model (the page then showed the served model's). A pair the cascade
 * sent to the teacher carries the teacher's P, on another scale: it is left out, and the count said.
 */
function oneScale(stored: Annotation[], model: string): Annotation[] {
  const kept = stored.filter((a) => a.model === undefined || a.model === model);
  const other = stored.length - kept.length;
  if (other > 0) {
    process.stderr.write(
      `paramine: ${other} of ${stored.length} annotations show another model's probabilities (the cascade's teacher); fitting on the other ${kept.length}\n`,
    );
  }
  return kept;
}

type Paramine = NonNullable<z.output<typeof ConfigSchema>['paramine']>;

/**
 * `--calibrate`: Platt scaling of the stored probabilities against the annotators' majority, composed with the
 * model's own label calibration into `paramine` (the rerank order's weights carried over), and the best cut
 * on the new scale.
 */
function calibrateOn(o: z.output<typeof thresholdOptions>, paramine: Paramine, stored: Annotation[]) {
  if (paramine.label_scheme === 'turku')
    throw new ParamineError('BAD_INPUT', '--calibrate needs a binary cross-encoder', { field: 'reranker' });
  const scored = modelScores(stored);
  const positives = scored.filter((s) => s.gold).length;
  if (positives === 0 || positives === scored.length)
    throw new ParamineError(
      'BAD_INPUT',
      '--calibrate needs paraphrases and non-paraphrases among the annotations',
    );
  const fit = fitPlatt(scored);
  if (!(fit.a > 0))
    throw new ParamineError(
      'BAD_INPUT',
      `the annotations do not rise with the model's P(paraphrase) (fitted slope ${fit.a.toFixed(3)}): no calibration written`,
    );
  const next = composePlatt(paramine.label_calibration, fit);
  if (paramine.calibration)
    paramine.calibration = rescaleRanking(paramine.calibration, paramine.label_calibration, next);
  paramine.label_calibration = {
    method: 'platt',
    a: next.a,
    b: next.b,
    fitted_on: `${scored.length} annotated pairs of ${o.index} (on top of the model's own)`,
  };
  const best = bestModelCut(recalibrated(scored, fit));
  if (best === undefined)
    throw new ParamineError('BAD_INPUT', 'no cut on the calibrated scale selects an annotated pair');
  const ece = (s: Scored[]) =>
    reliability(
      s.map((x) => x.score),
      s.map((x) => x.gold),
    ).ece.toFixed(3);
  return {
    best,
    said:
      `label calibration on ${scored.length} annotated pairs (${stored.length} annotations on the model's scale): ` +
      `P' = sigmoid(${fit.a.toFixed(3)} * logit(P) + ${fit.b.toFixed(3)}); ECE there ${ece(scored)} -> ` +
      `${ece(crossFitted(scored))} (5-fold cross-fitted; in-sample ${ece(recalibrated(scored, fit))})`,
  };
}

export function register(program: Command): void {
  const cmd = program
    .command('annotations')
    .description(
      "what the web page's annotations say about the cross-encoder, and a label cut chosen from them",
    );
  const source = (c: Command) =>
    c
      .requiredOption('--index <dir>', 'the index the annotations were made on')
      .option(
        '--annotations-dir <dir>',
        'the annotation store (default: INDEX/annotations; the service must be stopped)',
      )
      .option('--url <url>', 'read the report from a running service instead of the store');
  source(
    cmd.command('report').description('precision / recall at each cut, and annotator agreement (JSON)'),
  ).action(async (raw: Record<string, unknown>) => {
    const r = await report(parseInput(common, raw, 'options'));
    process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  });
  addFlags(
    source(
      cmd
        .command('threshold')
        .description(
          'copy the cross-encoder for this index with the label cut of best F1 on the annotations',
        ),
    ),
    thresholdFlags,
  ).action(threshold);
}

/**
 * `paramine mine`: the job runner from the command line (the same JobManager as POST /v1/jobs), with its
 * state in an LMDB directory beside the output so an interrupted run continues with --resume. Results
 * go to NDJSON (and clusters to a second file) once the job is done.
 */

import { availableParallelism } from 'node:os';
import { type Command, Option } from 'commander';
import type { z } from 'zod';
import { defaultOf } from '../config.js';
import { domainRequestSchema } from '../domain/index.js';
import { ParamineError } from '../errors.js';
import {
  type JobManager,
  type JobRecord,
  type JobSpecInput,
  type JobStore,
  jobSpecSchema,
  PRESET_NAMES,
} from '../jobs/index.js';
import { LABEL_MODES } from '../models/ports.js';
import { setNumThreads } from '../native/index.js';
import { createProgress, formatDuration } from '../progress.js';
import { DEFAULT_RERANKER, openService } from '../service/index.js';
import { existingPairs, writeLines, writePairs } from './mine-output.js';
import { type MineFlags, specFromFlags } from './mine-spec.js';

export { type MineFlags, specFromFlags };

const num = (v: string) => Number(v);

/**
 * The defaults the job schema declares, for the help text only: a flag not given leaves its field out of
 * the request, and the schema fills it (as for the HTTP body and the page).
 */
const said = (field: z.ZodType) => ` (default: ${String(defaultOf(field))})`;
const JOB = jobSpecSchema.shape;
const DOMAIN = domainRequestSchema.shape;

export function register(program: Command): void {
  mineCommand(program);
}

/** The `mine` command with the one-machine runner as its action (cli.ts may add the queue's options). */
export function mineCommand(program: Command): Command {
  return program
    .command('mine')
    .description('mine paraphrase pairs over an index (resumable): the same job runner as POST /v1/jobs')
    .requiredOption('--index <dir>', 'index directory built by `paramine index`')
    .requiredOption('--out <file>', 'pairs as NDJSON (clusters go to FILE.clusters.jsonl)')
    .option('--state <dir>', 'job state directory (default: OUT.state)')
    .option('--resume', 'continue the interrupted job in --state', false)
    .option(
      '--spec <file|json>',
      'a job request as POST /v1/jobs takes it (any field); the flags below add to it',
    )
    .option('--k <n>', `neighbours examined per sentence${said(JOB.k)}`, num)
    .option('--nprobe <n>', 'IVF lists visited per query', num)
    .option('--recall <r>', "wanted recall@10: the index's cheapest operating point reaching it", num)
    .option('--min-cosine <x>', 'drop pairs below this cosine', num)
    .option('--margin-k <n>', 'score pairs by ratio margin over k neighbours (Artetxe & Schwenk)', num)
    .option('--min-margin <x>', 'drop pairs below this margin (e.g. 1.06)', num)
    .option('--rerank', 'label pairs with the cross-encoder')
    .option('--reranker <name|dir>', `cross-encoder (default: ${DEFAULT_RERANKER})`)
    .option('--labels <labels...>', 'keep pairs with these labels (needs --rerank)')
    .addOption(
      new Option(
        '--labels-mode <mode>',
        'who labels (needs --rerank): fast, balanced (default), best',
      ).choices(LABEL_MODES),
    )
    .option('--min-probability <p>', "keep pairs whose label's probability is at least this", num)
    .option('--preset <name>', `the papers' recipes: ${PRESET_NAMES.join(', ')}`)
    .option('--min-tokens <n>', 'tokens each side at least', num)
    .option('--min-chars <n>', 'characters each side at least', num)
    .option('--bleu-min <x>', 'BLEU above this', num)
    .option('--bleu-max <x>', 'BLEU at most this', num)
    .option('--plr-max <x>', 'PLR below this', num)
    .option('--length-ratio-max <x>', 'token length ratio below this', num)
    .option('--char-ngram-min <x>', 'character n-gram cosine at least this', num)
    .option('--char-ngram-max <x>', 'character n-gram cosine below this', num)
    .option('--filter <json>', 'more filter fields as JSON, e.g. {"anyOf": [{"charNgramMax": 0.1}, ...]}')
    .option('--within-group <keys...>', 'pairs only within a group of these metadata keys (group tables)')
    .option(
      '--exclude-same <keys...>',
      'never pair sentences sharing a value under these keys (e.g. section)',
    )
    .option('--window <key:days>', 'pairs only within a window of an ordered key: date:7d, or year:2')
    .option('--negatives', 'emit the top-k pairs the filters or the cross-encoder reject (hard negatives)')
    .option('--exact-max <n>', 'groups up to this size are searched exactly, larger ones via the index', num)
    .option('--bertscore-min <x>', 'BERTScore F1 above this (token vectors of the encoder)', num)
    .option('--domain <name>', 'mine within a domain of the index (paramine domain add)')
    .option('--domain-mode <mode>', `subsample, weighted or combined${said(DOMAIN.mode)}`)
    .option(
      '--domain-threshold <sigma>',
      'keep sentences with σ below this (default: the change point 0)',
      num,
    )
    .option('--domain-top-fraction <f>', 'keep the most in-domain fraction of the index instead', num)
    .option('--domain-apply <side>', `subsample queries, candidates or both${said(DOMAIN.apply)}`)
    .option('--cluster', 'group accepted pairs into multi-reference sets')
    .option('--range <start:end>', 'mine only these ids as queries')
    .option('--queries <file>', 'query sentences from a corpus file instead of the index itself')
    .option(
      '--doc-pairs <file>',
      "mine within document pairs (`paramine docs align` output): candidates only in a sentence's partner documents",
    )
    .option(
      '--since <point>',
      "only pairs with a sentence added after: seq N, id:N (the last run's) or a time",
    )
    .option('--reverse-depth <n>', "with --since: each new sentence's neighbours checked first", num)
    .option('--append', 'add the pairs to --out, leaving out those already in it', false)
    .option('--batch-size <n>', `query sentences per checkpoint${said(JOB.batchSize)}`, num)
    .option(
      '--faiss-threads <n>',
      'FAISS OpenMP and BLAS threads (the miner has the machine); scores can differ in the last bits ' +
        'between thread counts (BLAS rounding), so resume with the same value',
      num,
      availableParallelism(),
    )
    .option('--quiet', 'no progress output', false)
    .action(async (o: MineFlags) => mine(o));
}

export async function mine(o: MineFlags): Promise<void> {
  const started = Date.now();
  const { spec, dataDir } = specFromFlags(o);
  // Unlike the service, the miner does not share the cores with queries: exact (flat) search spends most
  // of its time in BLAS sgemm, which the service keeps on one thread.
  setNumThreads(o.faissThreads, o.faissThreads);
  const service = await openService({
    index: o.index,
    reranker: spec.rerank !== undefined ? o.reranker : false,
    batch: { maxBatch: 256, maxWaitMs: 0 },
  });
  const { manager, store } = service.openJobs({ dir: o.state ?? `${o.out}.state`, dataDir });
  let peakRss = process.memoryUsage().rss;
  try {
    const job = await startOrResume(manager, store, spec, o.resume);
    const bar = createProgress({ label: 'mining', unit: 'sentences', quiet: o.quiet });
    let interrupted = false;
    const onSignal = () => {
      interrupted = true;
      void manager.close();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const end = await manager.wait(job.id, (j) => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      bar.update(j.processed, j.total, { pairs: j.pairs });
    });
    bar.stop();
    if (interrupted || end.state !== 'done') {
      const why = end.error ? `${end.error.code}: ${end.error.message}` : 'interrupted';
      throw new ParamineError(
        end.state === 'failed' ? 'INTERNAL' : 'UNAVAILABLE',
        `${why}; ${end.processed}/${end.total} sentences done. Run again with --resume to continue`,
      );
    }
    const clustersFile = `${o.out.replace(/\.jsonl?$/, '')}.clusters.jsonl`;
    const kept = o.append ? await existingPairs(o.out) : { lines: [], keys: new Set<string>() };
    const appended = await writePairs(o.out, kept, store.pairs(job.id));
    if (end.clusters !== undefined) {
      await writeLines(
        clustersFile,
        (function* () {
          for (const { seq, ids } of store.clusters(job.id)) {
            yield `${JSON.stringify({ seq, ids, texts: ids.map((id) => service.store.get(id)?.text) })}\n`;
          }
        })(),
      );
    }
    const secs = (Date.now() - started) / 1000;
    process.stdout.write(
      [
        o.append
          ? `${appended} new pairs from ${end.total} sentences added to ${o.out} (${kept.lines.length} there before)`
          : `${end.pairs} pairs from ${end.total} sentences written to ${o.out}`,
        `  sentences up to id ${(end.spec.untilId ?? 0) - 1}: next time --since id:${end.spec.untilId}`,
        ...(end.clusters === undefined ? [] : [`  ${end.clusters} clusters written to ${clustersFile}`]),
        `  wall time ${formatDuration(secs)}, ${(end.rate ?? 0).toFixed(0)} sentences/s mining, peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB`,
        '',
      ].join('\n'),
    );
  } finally {
    await service.close();
  }
}

async function startOrResume(
  manager: JobManager,
  store: JobStore,
  spec: JobSpecInput,
  resume: boolean,
): Promise<JobRecord> {
  const existing = store.list().at(-1);
  if (existing === undefined) {
    if (resume) throw new ParamineError('NOT_FOUND', 'nothing to resume: the state directory holds no job');
    return manager.create(spec);
  }
  if (!resume) {
    throw new ParamineError(
      'CONFLICT',
      `the state directory holds job ${existing.id} (${existing.state}); add --resume to continue it, or remove it`,
      { field: 'state' },
    );
  }
  manager.resume();
  return existing;
}

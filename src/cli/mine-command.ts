/**
 * `paramine mine`: the job runner from the command line (the same JobManager as POST /v1/jobs), with its
 * state in an LMDB directory beside the output so an interrupted run continues with --resume. Results
 * go to NDJSON (and clusters to a second file) once the job is done.
 */

import { availableParallelism } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { defaultOf } from '../config.js';
import { domainRequestSchema } from '../domain/index.js';
import { ParamineError } from '../errors.js';
import {
  DEFAULT_BATCH_SIZE,
  type JobManager,
  type JobRecord,
  type JobSpecInput,
  type JobStore,
  jobSpecSchema,
  PRESET_NAMES,
} from '../jobs/index.js';
import { LABEL_MODES, type LabelMode } from '../models/ports.js';
import { setNumThreads } from '../native/index.js';
import { createProgress, formatDuration } from '../progress.js';
import { DEFAULT_RERANKER, openService } from '../service/index.js';
import { existingPairs, writeLines, writePairs } from './mine-output.js';

const num = (v: string) => Number(v);

/** Defaults the job's own schema declares (the HTTP body has the same ones). */
const JOB = {
  k: defaultOf(jobSpecSchema.shape.k) as number,
  cluster: defaultOf(jobSpecSchema.shape.cluster) as boolean,
};
const DOMAIN = {
  mode: defaultOf(domainRequestSchema.shape.mode) as string,
  apply: defaultOf(domainRequestSchema.shape.apply) as string,
};

export interface MineFlags {
  index: string;
  out: string;
  state?: string;
  resume: boolean;
  k: number;
  nprobe?: number;
  recall?: number;
  minCosine?: number;
  marginK?: number;
  minMargin?: number;
  rerank: boolean;
  reranker?: string;
  labels?: string[];
  labelsMode?: LabelMode;
  minProbability?: number;
  preset?: string;
  minTokens?: number;
  minChars?: number;
  bleuMin?: number;
  bleuMax?: number;
  plrMax?: number;
  lengthRatioMax?: number;
  excludeSame?: string[];
  withinGroup?: string[];
  window?: string;
  negatives: boolean;
  exactMax?: number;
  charNgramMin?: number;
  charNgramMax?: number;
  filterJson?: string;
  bertscoreMin?: number;
  domain?: string;
  domainMode?: string;
  domainThreshold?: number;
  domainTopFraction?: number;
  domainApply?: string;
  cluster: boolean;
  range?: string;
  queries?: string;
  docPairs?: string;
  batchSize: number;
  faissThreads: number;
  quiet: boolean;
  since?: string;
  reverseDepth?: number;
  append: boolean;
}

/** `x` without its undefined fields. */
const defined = <T extends object>(x: T) =>
  Object.fromEntries(Object.entries(x).filter(([, v]) => v !== undefined)) as Partial<T>;

/** The job spec the flags describe (validated by the same schema as the HTTP body). */
export function specFromFlags(o: MineFlags): { spec: JobSpecInput; dataDir?: string } {
  let scope: JobSpecInput['scope'] = { kind: 'all' };
  let dataDir: string | undefined;
  if (o.range !== undefined && o.queries !== undefined) {
    throw new ParamineError('BAD_INPUT', 'give --range or --queries, not both', { field: 'range' });
  }
  if (o.range !== undefined) {
    const m = /^(\d+):(\d+)$/.exec(o.range);
    if (!m)
      throw new ParamineError('BAD_INPUT', '--range takes START:END (ids, END excluded)', { field: 'range' });
    scope = { kind: 'range', start: Number(m[1]), end: Number(m[2]) };
  } else if (o.queries !== undefined) {
    // The CLI may read any file the user names: its directory plays the data directory.
    dataDir = dirname(resolve(o.queries));
    scope = { kind: 'file', path: basename(o.queries) };
  }
  if (o.docPairs !== undefined) {
    const dir = dirname(resolve(o.docPairs));
    if (dataDir !== undefined && dataDir !== dir) {
      throw new ParamineError('BAD_INPUT', '--queries and --doc-pairs must sit in the same directory', {
        field: 'docPairs',
      });
    }
    dataDir = dir;
  }
  const spec: JobSpecInput = {
    scope,
    k: o.k,
    batchSize: o.batchSize,
    cluster: o.cluster,
    filter: defined({
      minTokens: o.minTokens,
      minChars: o.minChars,
      bleuMin: o.bleuMin,
      bleuMax: o.bleuMax,
      plrMax: o.plrMax,
      lengthRatioMax: o.lengthRatioMax,
      charNgramMin: o.charNgramMin,
      charNgramMax: o.charNgramMax,
      ...(o.filterJson === undefined ? {} : parseFilterJson(o.filterJson)),
      bertScoreMin: o.bertscoreMin,
    }),
    ...defined({
      nprobe: o.nprobe,
      recall: o.recall,
      minCosine: o.minCosine,
      excludeSame: o.excludeSame,
      exactMax: o.exactMax,
      since: o.since === undefined ? undefined : parseSince(o.since),
      reverseDepth: o.reverseDepth,
    }),
    ...(o.withinGroup === undefined
      ? {}
      : { withinGroup: o.withinGroup.length === 1 ? (o.withinGroup[0] as string) : o.withinGroup }),
    ...(o.window === undefined ? {} : { window: parseWindow(o.window) }),
    ...(o.docPairs === undefined ? {} : { docPairs: { path: basename(o.docPairs) } }),
    ...(o.negatives ? { negatives: true } : {}),
    ...(o.preset === undefined ? {} : { preset: o.preset }),
    ...(o.marginK !== undefined || o.minMargin !== undefined
      ? { margin: defined({ k: o.marginK, min: o.minMargin }) }
      : {}),
    ...rerankOf(o),
    ...(o.domain === undefined
      ? {}
      : {
          domain: {
            name: o.domain,
            ...defined({
              mode: o.domainMode as 'subsample',
              threshold: o.domainThreshold,
              topFraction: o.domainTopFraction,
              apply: o.domainApply as 'both',
            }),
          },
        }),
  };
  return dataDir === undefined ? { spec } : { spec, dataDir };
}

/** --since N | seq:N | id:N | an ISO time: the point after which sentences count as new. */
function parseSince(text: string): { seq: number } | { id: number } | { time: string } {
  const m = /^(?:(seq|id):)?(\d+)$/.exec(text.trim());
  if (m) return m[1] === 'id' ? { id: Number(m[2]) } : { seq: Number(m[2]) };
  if (!Number.isNaN(Date.parse(text))) return { time: new Date(text).toISOString() };
  throw new ParamineError(
    'BAD_INPUT',
    "--since takes a write sequence number (N or seq:N), id:N (a previous job's untilId) or an ISO time",
    { field: 'since' },
  );
}

/** --window KEY:Nd (days, a date key) or KEY:N (width, a number key). */
function parseWindow(text: string): { key: string; days?: number; width?: number } {
  const m = /^(.+):(\d+(?:\.\d+)?)(d?)$/.exec(text);
  if (!m) {
    throw new ParamineError('BAD_INPUT', '--window takes KEY:DAYSd (a date key, e.g. date:7d) or KEY:WIDTH', {
      field: 'window',
    });
  }
  const n = Number(m[2]);
  return m[3] === 'd' ? { key: m[1] as string, days: n } : { key: m[1] as string, width: n };
}

/** --filter '{"anyOf": [...]}': the filter fields as JSON (validated with the job). */
function parseFilterJson(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new ParamineError('BAD_INPUT', '--filter takes a JSON object of filter fields', { field: 'filter' });
}

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
    .option('--k <n>', 'neighbours examined per sentence', num, JOB.k)
    .option('--nprobe <n>', 'IVF lists visited per query', num)
    .option('--recall <r>', "wanted recall@10: the index's cheapest operating point reaching it", num)
    .option('--min-cosine <x>', 'drop pairs below this cosine', num)
    .option('--margin-k <n>', 'score pairs by ratio margin over k neighbours (Artetxe & Schwenk)', num)
    .option('--min-margin <x>', 'drop pairs below this margin (e.g. 1.06)', num)
    .option('--rerank', 'label pairs with the cross-encoder', false)
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
    .option(
      '--negatives',
      'emit the top-k pairs the filters or the cross-encoder reject (hard negatives)',
      false,
    )
    .option('--exact-max <n>', 'groups up to this size are searched exactly, larger ones via the index', num)
    .option('--bertscore-min <x>', 'BERTScore F1 above this (token vectors of the encoder)', num)
    .option('--domain <name>', 'mine within a domain of the index (paramine domain add)')
    .option('--domain-mode <mode>', 'subsample, weighted or combined', DOMAIN.mode)
    .option(
      '--domain-threshold <sigma>',
      'keep sentences with σ below this (default: the change point 0)',
      num,
    )
    .option('--domain-top-fraction <f>', 'keep the most in-domain fraction of the index instead', num)
    .option('--domain-apply <side>', 'subsample queries, candidates or both', DOMAIN.apply)
    .option('--cluster', 'group accepted pairs into multi-reference sets', JOB.cluster)
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
    .option('--batch-size <n>', 'query sentences per checkpoint', num, DEFAULT_BATCH_SIZE)
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

function rerankOf(o: MineFlags) {
  return o.rerank
    ? { rerank: defined({ labels: o.labels, minProbability: o.minProbability, mode: o.labelsMode }) }
    : {};
}

export async function mine(o: MineFlags): Promise<void> {
  const started = Date.now();
  const { spec, dataDir } = specFromFlags(o);
  // Unlike the service, the miner does not share the cores with queries: exact (flat) search spends most
  // of its time in BLAS sgemm, which the service keeps on one thread.
  setNumThreads(o.faissThreads, o.faissThreads);
  const service = await openService({
    index: o.index,
    reranker: o.rerank ? o.reranker : false,
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

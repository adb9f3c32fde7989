/**
 * `paramine mine`'s flags as a job request: the request a `--spec` file or JSON gives (any field of POST
 * /v1/jobs), then the fields the flags give. Defaults are the job schema's own (a flag not given leaves
 * its field out), so the CLI, the API and the page default alike.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { ParamineError } from '../errors.js';
import type { JobSpecInput } from '../jobs/index.js';
import type { LabelMode } from '../models/ports.js';

export interface MineFlags {
  /** A whole job request (JSON, as POST /v1/jobs takes it) the other flags add to. */
  spec?: string;
  index: string;
  out: string;
  state?: string;
  resume: boolean;
  k?: number;
  nprobe?: number;
  recall?: number;
  minCosine?: number;
  marginK?: number;
  minMargin?: number;
  rerank?: boolean;
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
  negatives?: boolean;
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
  cluster?: boolean;
  range?: string;
  queries?: string;
  docPairs?: string;
  batchSize?: number;
  faissThreads: number;
  quiet: boolean;
  since?: string;
  reverseDepth?: number;
  append: boolean;
}

/** `x` without its undefined fields. */
const defined = <T extends object>(x: T) =>
  Object.fromEntries(Object.entries(x).filter(([, v]) => v !== undefined)) as Partial<T>;

/** The scope --range or --queries gives (none: the spec's, else the whole index), and the data directory. */
function scopeOf(o: MineFlags): { scope?: JobSpecInput['scope']; dataDir?: string } {
  if (o.range !== undefined && o.queries !== undefined) {
    throw new ParamineError('BAD_INPUT', 'give --range or --queries, not both', { field: 'range' });
  }
  let out: { scope?: JobSpecInput['scope']; dataDir?: string } = {};
  if (o.range !== undefined) {
    const m = /^(\d+):(\d+)$/.exec(o.range);
    if (!m)
      throw new ParamineError('BAD_INPUT', '--range takes START:END (ids, END excluded)', { field: 'range' });
    out = { scope: { kind: 'range', start: Number(m[1]), end: Number(m[2]) } };
  } else if (o.queries !== undefined) {
    // The CLI may read any file the user names: its directory plays the data directory.
    out = { scope: { kind: 'file', path: basename(o.queries) }, dataDir: dirname(resolve(o.queries)) };
  }
  if (o.docPairs !== undefined) {
    const dir = dirname(resolve(o.docPairs));
    if (out.dataDir !== undefined && out.dataDir !== dir) {
      throw new ParamineError('BAD_INPUT', '--queries and --doc-pairs must sit in the same directory', {
        field: 'docPairs',
      });
    }
    out.dataDir = dir;
  }
  return out;
}

/** The job fields the flags give (none for a flag not given: the schema's default applies). */
function flagFields(o: MineFlags): JobSpecInput {
  return {
    ...defined({
      k: o.k,
      batchSize: o.batchSize,
      cluster: o.cluster,
      nprobe: o.nprobe,
      recall: o.recall,
      minCosine: o.minCosine,
      excludeSame: o.excludeSame,
      exactMax: o.exactMax,
      since: o.since === undefined ? undefined : parseSince(o.since),
      reverseDepth: o.reverseDepth,
      preset: o.preset,
      negatives: o.negatives,
    }),
    ...(o.withinGroup === undefined
      ? {}
      : { withinGroup: o.withinGroup.length === 1 ? (o.withinGroup[0] as string) : o.withinGroup }),
    ...(o.window === undefined ? {} : { window: parseWindow(o.window) }),
    ...(o.docPairs === undefined ? {} : { docPairs: { path: basename(o.docPairs) } }),
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
              mode: o.domainMode as 'subsample' | undefined,
              threshold: o.domainThreshold,
              topFraction: o.domainTopFraction,
              apply: o.domainApply as 'both' | undefined,
            }),
          },
        }),
  };
}

/**
 * The job request the flags describe (validated by the same schema as the HTTP body): the --spec request,
 * then each field a flag gives (the filter's fields one by one).
 */
export function specFromFlags(o: MineFlags): { spec: JobSpecInput; dataDir?: string } {
  const { scope, dataDir } = scopeOf(o);
  const base = o.spec === undefined ? {} : readSpec(o.spec);
  const filter = defined({
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
  });
  const spec: JobSpecInput = {
    ...base,
    ...flagFields(o),
    ...(scope === undefined ? {} : { scope }),
    ...(Object.keys(filter).length === 0 ? {} : { filter: { ...(base.filter ?? {}), ...filter } }),
  };
  if (base.rerank !== undefined && o.rerank) spec.rerank = { ...base.rerank, ...spec.rerank };
  return dataDir === undefined ? { spec } : { spec, dataDir };
}

/** --spec: JSON inline (it starts with `{`) or a file holding it. */
function readSpec(text: string): JobSpecInput {
  let raw = text;
  if (!/^\s*[[{]/.test(text)) {
    try {
      raw = readFileSync(text, 'utf8');
    } catch (e) {
      throw new ParamineError('FILE_NOT_FOUND', `--spec ${text}: ${(e as Error).message}`, { field: 'spec' });
    }
  }
  try {
    const v: unknown = JSON.parse(raw);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as JobSpecInput;
  } catch {
    // reported below
  }
  throw new ParamineError(
    'BAD_INPUT',
    '--spec takes a job request as JSON (a file or inline): {"k": 5, ...}',
    {
      field: 'spec',
    },
  );
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

function rerankOf(o: MineFlags) {
  return o.rerank
    ? { rerank: defined({ labels: o.labels, minProbability: o.minProbability, mode: o.labelsMode }) }
    : {};
}

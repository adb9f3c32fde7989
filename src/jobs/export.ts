/**
 * `paramine export`: a dataset from a job's pairs, in the pair format the web page and the training
 * scripts share (JSONL `{"s1", "s2", "label", "s1_id", "s2_id", …}`) and as Parquet, split into train /
 * val / test grouped by a metadata key (no group on two sides) or ordered by time, without the pairs that
 * share a group with a given test set (MultiPIT drops pairs sharing a trend or URL with its test set).
 *
 * Two passes over the pairs (a job's NDJSON results or its state directory): the first collects each
 * pair's groups and time and assigns splits, the second writes; memory holds a few numbers a pair.
 */
import { createReadStream, mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import { ContextReader, deletedIds, groupValuesOf, type SentenceContext } from '../store/index.js';
import { type ExportContext, type ExportRow, SplitSink } from './export-sink.js';
import { assignSplits, type PairFacts, type SplitPlan } from './splits.js';
import { JobStore, type MinedPair, type PairSide } from './store.js';

export type ExportSource = { pairs: string } | { state: string; job?: string | undefined };

export interface ExportOptions {
  source: ExportSource;
  out: string;
  formats: ReadonlyArray<'jsonl' | 'parquet'>;
  split: SplitPlan;
  groupBy?: string | undefined;
  orderBy?: string | undefined;
  /** A file whose groups (under excludeKey) no exported pair may share: pairs JSONL, or values one a line. */
  excludeGroupsOf?: string | undefined;
  excludeKey?: string | undefined;
  /** The label of every row when the pairs have none (a job without rerank). */
  label?: string | undefined;
  /** Keep only pairs whose label is one of these, and whose label's probability is at least minProbability. */
  keepLabels?: readonly string[] | undefined;
  minProbability?: number | undefined;
  seed: number;
  /** Each side's N sentences before and after in its document, from `index` (0: none). */
  context?: number | undefined;
  /** The index the pairs were mined from: context comes from it, and pairs whose sentence was deleted from it
   * since (DELETE /v1/sentences, `paramine delete`) are left out. */
  index?: string | undefined;
}

export interface ExportSummary {
  pairs: number;
  excluded: number;
  /** Pairs left out by keepLabels / minProbability. */
  filtered: number;
  /** Pairs left out because a side was deleted from --index. */
  deleted: number;
  splits: Array<{ name: string; pairs: number; groups: number }>;
  files: string[];
}

export type { ExportContext, ExportRow };

const sideSchema = z.object({
  id: z.number().int().nullable(),
  text: z.string(),
  meta: z.record(z.string(), z.unknown()).optional(),
});
/** What a results line must hold (paramine mine's output, GET /v1/jobs/:id/results). */
const pairLineSchema = z.looseObject({
  a: sideSchema,
  b: sideSchema,
  cosine: z.number(),
  margin: z.number().optional(),
  label: z.string().optional(),
  probabilities: z.record(z.string(), z.number()).optional(),
  span: z
    .object({ side: z.enum(['a', 'b']), start: z.number().int(), end: z.number().int() })
    .loose()
    .optional(),
});
type PairLine = z.infer<typeof pairLineSchema>;

async function* readPairs(source: ExportSource): AsyncGenerator<PairLine> {
  if ('pairs' in source) {
    const lines = createInterface({
      input: createReadStream(source.pairs),
      crlfDelay: Number.POSITIVE_INFINITY,
    });
    let n = 0;
    for await (const line of lines) {
      n++;
      if (line.trim() === '') continue;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        throw new ParamineError('BAD_FILE', `${source.pairs}:${n}: not JSON`, {
          field: `${source.pairs}:${n}`,
        });
      }
      const r = pairLineSchema.safeParse(json);
      if (!r.success) {
        const issue = r.error.issues[0];
        throw new ParamineError(
          'BAD_FILE',
          `${source.pairs}:${n}: not a mined pair (${issue?.path.join('.')}: ${issue?.message})`,
          { field: `${source.pairs}:${n}` },
        );
      }
      yield r.data;
    }
    return;
  }
  const store = JobStore.open(source.state, { reader: true });
  try {
    const job = source.job === undefined ? store.list().at(-1) : store.get(source.job);
    if (job === undefined) {
      throw new ParamineError(
        'NOT_FOUND',
        `no job ${source.job ?? ''} in ${source.state}`.replace('  ', ' '),
        {
          field: 'job',
        },
      );
    }
    for (const { pair } of store.pairs(job.id)) yield pair as MinedPair & PairLine;
  } finally {
    await store.close();
  }
}

const sideGroups = (key: string, s: Pick<PairSide, 'text' | 'meta'>): string[] =>
  groupValuesOf(
    { key, order: 'none' },
    s.meta === undefined ? { text: s.text } : { text: s.text, meta: s.meta },
  ).map(String);

function pairGroups(key: string, p: PairLine): string[] {
  return [...new Set([...sideGroups(key, p.a), ...sideGroups(key, p.b)])];
}

/** The later side's time (ISO date) or number under `key`; undefined when neither side has one. */
function pairOrder(key: string, p: PairLine): number | undefined {
  const of = (s: PairLine['a']) => {
    const v = s.meta?.[key];
    if (typeof v === 'number') return v;
    if (typeof v !== 'string') return undefined;
    const n = Number(v);
    return Number.isFinite(n) && v.trim() !== '' ? n : Date.parse(v);
  };
  const xs = [of(p.a), of(p.b)].filter((x): x is number => x !== undefined && Number.isFinite(x));
  return xs.length === 0 ? undefined : Math.max(...xs);
}

/** The values a test set holds under `key`: from pairs (a/b meta, or export rows' groups) or a value list. */
async function excludedValues(file: string, key: string): Promise<Set<string>> {
  const out = new Set<string>();
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const raw of lines) {
    const line = raw.trim();
    if (line === '') continue;
    if (!line.startsWith('{')) {
      out.add(line);
      continue;
    }
    const o = JSON.parse(line) as Record<string, unknown>;
    const p = pairLineSchema.safeParse(o);
    if (p.success) for (const v of pairGroups(key, p.data)) out.add(v);
    const g = (o.groups as Record<string, unknown> | undefined)?.[key];
    if (Array.isArray(g)) for (const v of g) out.add(String(v));
    for (const side of ['s1_meta', 's2_meta', 'meta']) {
      const meta = o[side] as Record<string, unknown> | undefined;
      if (meta !== undefined) for (const v of sideGroups(key, { text: '', meta })) out.add(v);
    }
    if (o[key] !== undefined) for (const v of sideGroups(key, { text: '', meta: o })) out.add(v);
  }
  return out;
}

const docOf = (s: PairLine['a']): string | undefined => {
  const d = s.meta?.doc;
  return typeof d === 'string' || typeof d === 'number' ? String(d) : undefined;
};

/** Each side's document id and, with a reader, its context window. */
function documentFields(p: PairLine, around: ((id: number) => SentenceContext | undefined) | undefined) {
  const out: Pick<ExportRow, 's1_doc' | 's2_doc' | 's1_context' | 's2_context'> = {};
  for (const [side, s] of [['s1', p.a] as const, ['s2', p.b] as const]) {
    const doc = docOf(s);
    if (doc !== undefined) out[`${side}_doc`] = doc;
    const c = around !== undefined && s.id !== null ? around(s.id) : undefined;
    if (c !== undefined) {
      out[`${side}_context`] = { before: c.before.map((x) => x.text), after: c.after.map((x) => x.text) };
    }
  }
  return out;
}

function toRow(
  p: PairLine,
  split: string,
  label: string,
  groupBy: string | undefined,
  groups: string[],
  around?: (id: number) => SentenceContext | undefined,
): ExportRow {
  let s1 = p.a.text;
  let s2 = p.b.text;
  let span: ExportRow['span'];
  if (p.span) {
    const whole = p.span.side === 'a' ? p.a.text : p.b.text;
    const cut = whole.slice(p.span.start, p.span.end);
    if (p.span.side === 'a') s1 = cut;
    else s2 = cut;
    span = { side: p.span.side, start: p.span.start, end: p.span.end, source: whole };
  }
  return {
    s1,
    s2,
    label,
    s1_id: p.a.id,
    s2_id: p.b.id,
    cosine: p.cosine,
    ...(p.margin === undefined ? {} : { margin: p.margin }),
    ...(p.probabilities === undefined ? {} : { probabilities: p.probabilities }),
    ...(span === undefined ? {} : { span }),
    ...(groupBy === undefined ? {} : { groups: { [groupBy]: groups } }),
    ...documentFields(p, around),
    split,
  };
}

async function contextReader(o: ExportOptions): Promise<ContextReader | undefined> {
  if ((o.context ?? 0) <= 0) return undefined;
  if (o.index === undefined) {
    throw new ParamineError(
      'BAD_INPUT',
      'context comes from the index the pairs were mined from: give --index DIR',
      {
        field: 'index',
      },
    );
  }
  return ContextReader.open(o.index);
}

/** Whether a pair passes the label and probability filters (pairs without a model label: by --label). */
function kept(p: PairLine, o: ExportOptions): boolean {
  const label = p.label ?? o.label;
  if (o.keepLabels !== undefined && (label === undefined || !o.keepLabels.includes(label))) return false;
  if (o.minProbability === undefined) return true;
  const prob = p.label === undefined ? undefined : p.probabilities?.[p.label];
  return prob !== undefined && prob >= o.minProbability;
}

export async function exportDataset(o: ExportOptions): Promise<ExportSummary> {
  const excludeKey = o.excludeKey ?? o.groupBy;
  if (o.excludeGroupsOf !== undefined && excludeKey === undefined) {
    throw new ParamineError(
      'BAD_INPUT',
      'excluding a test set needs the key its groups are under (--exclude-key)',
      {
        field: 'excludeKey',
      },
    );
  }
  const excluded =
    o.excludeGroupsOf === undefined
      ? undefined
      : await excludedValues(o.excludeGroupsOf, excludeKey as string);
  const deleted = o.index === undefined ? new Set<number>() : deletedIds(o.index);
  const isDeleted = (s: PairLine['a']) => s.id !== null && deleted.has(s.id);
  // Pass 1: which pairs stay, their groups and times.
  /** Per pair read: its index into facts, or -1 when excluded (-2: a side deleted). */
  const factOf: number[] = [];
  const facts: PairFacts[] = [];
  let n = 0;
  for await (const p of readPairs(o.source)) {
    n++;
    if (isDeleted(p.a) || isDeleted(p.b)) {
      factOf.push(-2);
      continue;
    }
    if (p.label === undefined && o.label === undefined) {
      throw new ParamineError('BAD_INPUT', `pair ${n} has no label (the job did not rerank); give --label`, {
        field: 'label',
      });
    }
    if (!kept(p, o)) {
      factOf.push(-3);
      continue;
    }
    const drop = excluded !== undefined && pairGroups(excludeKey as string, p).some((v) => excluded.has(v));
    factOf.push(drop ? -1 : facts.length);
    if (drop) continue;
    const order = o.orderBy === undefined ? undefined : pairOrder(o.orderBy, p);
    if (o.orderBy !== undefined && order === undefined) {
      throw new ParamineError('BAD_INPUT', `pair ${n} has no "${o.orderBy}" value to order by`, {
        field: 'orderBy',
      });
    }
    facts.push({ groups: o.groupBy === undefined ? [] : pairGroups(o.groupBy, p), order });
  }
  const splitOf = assignSplits(facts, o.split, {
    grouped: o.groupBy !== undefined,
    ordered: o.orderBy !== undefined,
    seed: o.seed,
  });
  // Pass 2: write every kept pair to its split.
  mkdirSync(o.out, { recursive: true });
  const reader = await contextReader(o);
  const around = reader && ((id: number) => reader.context(id, o.context ?? 0));
  const sinks = await Promise.all(o.split.names.map((name) => SplitSink.open(o.out, name, o.formats)));
  let i = 0;
  try {
    for await (const p of readPairs(o.source)) {
      const f = factOf[i++] ?? -1;
      if (f < 0) continue;
      const split = splitOf[f] as number;
      const sink = sinks[split] as SplitSink;
      const groups = facts[f]?.groups ?? [];
      await sink.add(toRow(p, sink.name, (p.label ?? o.label) as string, o.groupBy, [...groups], around));
    }
  } finally {
    await reader?.close();
  }
  const files = (await Promise.all(sinks.map((s) => s.close()))).flat();
  return summaryOf(facts, factOf, splitOf, sinks, files);
}

/** What an export wrote: counts by what kept or dropped each pair, and each split's pairs and groups. */
function summaryOf(
  facts: readonly PairFacts[],
  factOf: readonly number[],
  splitOf: ArrayLike<number>,
  sinks: readonly SplitSink[],
  files: string[],
): ExportSummary {
  const count = (code: number) => factOf.filter((x) => x === code).length;
  return {
    pairs: facts.length,
    excluded: count(-1),
    deleted: count(-2),
    filtered: count(-3),
    splits: sinks.map((s, si) => ({
      name: s.name,
      pairs: s.count,
      groups: new Set(facts.flatMap((f, fi) => (splitOf[fi] === si ? f.groups : []))).size,
    })),
    files,
  };
}

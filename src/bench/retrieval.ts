/**
 * Retrieval benchmark (Kanerva et al., Fig. 8/11): index both sides of every pair plus distractors with
 * the real indexer, query s1 of every positive pair and find the rank of s2 (s1 itself excluded):
 * top-N, not found, MRR, overall and per label; the same through exact search; and top-1/10 after each
 * cross-encoder named reranks the first K candidates (through the service's search core), side by side.
 * Each figure also comes counting any sentence the data pair with s1 as found (`known`): where s1 has many
 * paraphrases (ParaSCI: 16 a query with its train split), ranking another of them first is no miss.
 */
import { Option } from 'commander';
import { z } from 'zod';
import { type LabeledPair, readPairs } from '../corpus/index.js';
import { DEFAULT_ENCODER } from '../models/catalog.js';
import { LABEL_MODES } from '../models/ports.js';
import { resolveModelDir } from '../models/resolve.js';
import { openService } from '../service/index.js';
import { detectScheme } from '../text/labels.js';
import { retrievalSvg } from './figure.js';
import { defineBenchmark, type Log, list } from './harness.js';
import { type RankedQuery, type RetrievalResult, retrievalMetrics } from './metrics.js';
import { pct, retrievalMarkdown } from './report.js';
import {
  buildPairIndex,
  knownPerQuery,
  onePerSentence,
  type PairIndex,
  type PairQuery,
  positiveQueries,
} from './retrieval-index.js';
import {
  firstIsNegative,
  type Ranked,
  type RankInput,
  rankAfterRerank,
  rankThrough,
} from './retrieval-rank.js';
import { perQueryRows, writeJsonLines } from './retrieval-rows.js';

export const retrievalSchema = z.object({
  pairs: z.string(),
  distractors: z.array(z.string()).default([]),
  model: z.string(),
  /** The cross-encoders (none, one or several): each reranks the same candidates of the same index. */
  reranker: z.array(z.string()).default([]),
  rerankDepth: z.coerce.number().int().min(1).max(1000).default(20),
  /** Who labels the reranked candidates (the service's default: balanced). */
  labelsMode: z.enum(LABEL_MODES).optional(),
  depths: z.array(z.coerce.number().int().min(1)).min(1),
  exact: z.boolean().default(false),
  factory: z.string(),
  nprobe: z.coerce.number().int().min(1).optional(),
  positive: z.array(z.string()).optional(),
  /** More labeled pair files (other splits of the set) whose positive pairs are known paraphrases too. */
  known: z.array(z.string()).default([]),
  /** A JSON Lines file for one row per query: its ranks and first candidate in each ranking. */
  perQuery: z.string().min(1).optional(),
});
export type RetrievalOptions = z.input<typeof retrievalSchema>;

type Stats = Omit<RetrievalResult, 'kind' | 'labels'>;
const overall = (r: RetrievalResult): Pick<Stats, 'top' | 'not_found' | 'mrr'> => ({
  top: r.top,
  not_found: r.not_found,
  mrr: r.mrr,
});
const byLabel = (r: RetrievalResult) =>
  Object.fromEntries(
    Object.entries(r.labels).map(([k, v]) => [k, { n: v.n, top: v.top, not_found: v.not_found, mrr: v.mrr }]),
  );

/** A pair file's label scheme, `--positive` applied. */
const schemeOf = (pairs: readonly LabeledPair[], o: z.output<typeof retrievalSchema>) =>
  detectScheme(
    pairs.map((p) => p.label),
    o.positive ? { positive: o.positive } : {},
  );

/** The positive and the negative pairs of the `known` files, each file's labels read by its own scheme. */
async function knownPairs(o: z.output<typeof retrievalSchema>) {
  const known = { positive: [] as LabeledPair[], negative: [] as LabeledPair[] };
  for (const file of o.known) {
    const pairs = await readPairs(file);
    const scheme = schemeOf(pairs, o);
    known.positive.push(...pairs.filter((p) => scheme.isPositive(p.label) === true));
    known.negative.push(...pairs.filter((p) => scheme.isPositive(p.label) === false));
  }
  return known;
}

/**
 * How often the first candidate is one the data label not a paraphrase of s1, for ANN and each reranker,
 * once a distinct s1 (`once`), only where the data label some pairs not paraphrases (MultiPIT, MRPC): a first
 * candidate among them is a real error, which "not the known paraphrase" alone cannot tell from an
 * unlabeled paraphrase.
 */
function labeledNegatives(queries: readonly PairQuery[], ranked: Ranked, once: readonly number[]) {
  const labeled = once.filter((i) => (queries[i] as PairQuery).negatives.size > 0).length;
  if (!labeled) return undefined;
  const share = (ranks: readonly RankedQuery[]) =>
    once.filter((i) => firstIsNegative(queries[i] as PairQuery, ranks[i] as RankedQuery)).length /
    once.length;
  return {
    queries_with_negatives: labeled,
    ann: share(ranked.ann),
    reranked: ranked.reranked.map((r) => ({ reranker: r.reranker, share: share(r.ranks) })),
  };
}

/** The ranks of the first known paraphrase, once a distinct s1. */
const knownRanks = (ranks: readonly RankedQuery[], once: readonly number[]): readonly RankedQuery[] =>
  once.map((i) => ({ rank: ranks[i]?.known, group: (ranks[i] as RankedQuery).group }));

/**
 * The mean of the queries' oracle top-1 (RankedQuery.ceiling) over the candidates a reranker sees: the most a
 * reranker that only tells paraphrases from the rest gains, where s1 has several (ParaSCI: the gold s2 is
 * one of ~16 known paraphrases); per pair for the pair's own s2, once a distinct s1 for any known one.
 */
function ceilingOf(ranks: readonly RankedQuery[], depth: number, once: readonly number[]) {
  const c = ranks.flatMap((r) => (r.ceiling ? [r.ceiling] : []));
  if (!c.length || c.length !== ranks.length) return undefined;
  const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
  return {
    depth,
    top1: mean(c.map((x) => x.pair)),
    top1_any_known: mean(once.map((i) => c[i]?.anyKnown ?? 0)),
  };
}

/** The metrics of each ranking of a run, of the ranks `pick` chooses, and the rerank rows of the result. */
function figuresOf(
  ranked: Ranked,
  o: z.output<typeof retrievalSchema>,
  pick: (r: readonly RankedQuery[]) => readonly RankedQuery[],
) {
  const rerankDepths = [1, 10].filter((d) => d <= o.rerankDepth);
  const exact = ranked.exact && retrievalMetrics(pick(ranked.exact), o.depths);
  const reranked = ranked.reranked.map((r) => ({
    reranker: r.reranker,
    metrics: retrievalMetrics(pick(r.ranks), rerankDepths),
  }));
  const rows = reranked.map((r) => ({
    reranker: r.reranker,
    depth: o.rerankDepth,
    top: r.metrics.top,
    mrr: r.metrics.mrr,
  }));
  return { ann: retrievalMetrics(pick(ranked.ann), o.depths), exact, reranked, rows };
}

/** Opens the service over the built index and ranks every query through ANN, exact and rerank. */
async function rankAll(
  built: PairIndex,
  pairs: readonly LabeledPair[],
  known: Awaited<ReturnType<typeof knownPairs>>,
  o: z.output<typeof retrievalSchema>,
  log: Log,
) {
  const scheme = schemeOf(pairs, o);
  const service = await openService({ index: built.dir, model: o.model, reranker: false });
  try {
    const { index, store } = service;
    const dim = index.dim;
    const corpusSize = store.count;
    const queries = positiveQueries(pairs, scheme, store, log, known.positive, known.negative);
    const input: RankInput = {
      queries,
      vectors: await built.vectors(
        queries.map((x) => x.q),
        dim,
      ),
      dim,
      scheme,
    };
    const deepest = Math.max(...o.depths);
    const t0 = performance.now();
    const ranked: Ranked = {
      ann: await rankThrough(index, input, {
        deepest,
        corpusSize,
        nprobe: o.nprobe,
        ...(o.reranker.length ? { ceilingDepth: o.rerankDepth } : {}),
      }),
      reranked: [],
    };
    const annS = (performance.now() - t0) / 1000;
    if (o.exact) {
      const flat = await built.flat(dim, index.metric, corpusSize);
      ranked.exact = await rankThrough(flat, input, { deepest, corpusSize });
      await flat.close();
    }
    for (const reranker of o.reranker) {
      const reranking = await openService({
        index: built.dir,
        model: o.model,
        reranker,
        labelsMode: o.labelsMode,
      });
      try {
        const ranks = await rankAfterRerank(reranking.core, input, {
          depth: o.rerankDepth,
          nprobe: o.nprobe,
        });
        ranked.reranked.push({ reranker, ranks });
      } finally {
        await reranking.close();
      }
    }
    if (o.perQuery)
      writeJsonLines(
        o.perQuery,
        perQueryRows(queries, ranked, (id) => store.get(id)?.text),
      );
    return { ranked, queries, scheme, corpusSize, annS, manifest: index.manifest };
  } finally {
    await service.close();
  }
}

export async function retrievalBenchmark(options: RetrievalOptions, log: Log = () => {}) {
  const o = retrievalSchema.parse(options);
  const pairs = await readPairs(o.pairs);
  // Before the build: a bad file, model name or --per-query path fails in seconds, not after the embedding.
  const knownLabeled = await knownPairs(o);
  for (const r of o.reranker) resolveModelDir(r, 'reranker');
  if (o.perQuery) writeJsonLines(o.perQuery, []);
  const tb = performance.now();
  const built = await buildPairIndex(pairs, o, log);
  // Building is almost all embedding: its rate stands for the encoder's speed next to its quality.
  const buildS = (performance.now() - tb) / 1000;
  try {
    const { ranked, queries, scheme, corpusSize, annS, manifest } = await rankAll(
      built,
      pairs,
      knownLabeled,
      o,
      log,
    );
    // Every figure twice: the pair's own s2 as the one target, and any known paraphrase of s1.
    const { ann, exact, reranked, rows } = figuresOf(ranked, o, (r) => r);
    // What depends on s1 alone counts once a distinct s1 (onePerSentence).
    const once = onePerSentence(queries);
    const known = figuresOf(ranked, o, (r) => knownRanks(r, once));
    const ceiling = ceilingOf(ranked.ann, o.rerankDepth, once);
    const negatives = labeledNegatives(queries, ranked, once);
    const result = {
      kind: 'retrieval' as const,
      pairs: queries.length,
      distinct_s1: once.length,
      corpus_size: corpusSize,
      model: manifest.model.id,
      scheme: scheme.name,
      index: { factory: manifest.factory, nprobe: o.nprobe ?? manifest.search.nprobe },
      depths: o.depths,
      overall: overall(ann),
      ...(exact ? { exact: overall(exact) } : {}),
      reranked: rows,
      ...(ceiling ? { rerank_ceiling: ceiling } : {}),
      ...(negatives ? { first_labeled_negative: negatives } : {}),
      known: {
        files: o.known,
        per_query: knownPerQuery(queries, once),
        overall: overall(known.ann),
        ...(known.exact ? { exact: overall(known.exact) } : {}),
        reranked: known.rows,
      },
      by_label: byLabel(ann),
      ...(exact ? { exact_by_label: byLabel(exact) } : {}),
      timings: { ann_search_s: annS, build_s: buildS, build_sentences_per_s: corpusSize / buildS },
    };
    // Per query too (in `queries` order), and every pair read: what tests check the figures against.
    return {
      result,
      ann,
      exact,
      reranked,
      known,
      ranked,
      pairs,
      queries: queries.map((x) => x.pair),
    };
  } finally {
    built.remove();
  }
}

export const retrieval = defineBenchmark({
  name: 'retrieval',
  description: "top-N retrieval of each positive pair's s2 given s1, among all sentences plus distractors",
  figure: true,
  options: (cmd) =>
    cmd
      .requiredOption(
        '--pairs <file>',
        'labeled pairs (MRPC TSV, MultiPIT CSV, Turku JSON, ParaSCI .src, TSV/JSONL)',
      )
      .option('--distractors <files...>', 'extra corpus files hiding the pairs')
      .option('--model <name|dir>', 'encoder', DEFAULT_ENCODER)
      .option('--reranker <names>', 'also report top-1/10 after reranking the first K (several: a,b)', list)
      .option('--rerank-depth <k>', 'candidates reranked', '20')
      .addOption(
        new Option('--labels-mode <mode>', 'who labels the reranked candidates (default balanced)').choices(
          LABEL_MODES,
        ),
      )
      .option('--depths <list>', 'top-N depths', list, ['1', '10', '100', '1000'])
      .option('--exact', 'also through exact (flat) search', false)
      .option('--factory <str>', 'FAISS factory string or auto', 'auto')
      .option('--nprobe <n>', 'IVF lists visited')
      .option('--positive <labels>', 'labels counted as positive', list)
      .option(
        '--known <files...>',
        'more pair files (other splits) whose positive pairs also count as paraphrases found',
      )
      .option('--per-query <file>', 'also write one JSON line per query: its ranks and first candidates'),
  schema: retrievalSchema,
  async run(o, log) {
    const run = await retrievalBenchmark(o, log);
    const several = run.reranked.length > 1;
    const variants = (f: Pick<typeof run.known, 'ann' | 'exact' | 'reranked'>, suffix: string) => [
      { name: `ANN${suffix}`, result: f.ann },
      ...(f.exact ? [{ name: `exact${suffix}`, result: f.exact }] : []),
      ...f.reranked.map((r) => ({
        name: `ANN + rerank@${o.rerankDepth}${several ? ` (${r.reranker})` : ''}${suffix}`,
        result: r.metrics,
      })),
    ];
    // The known-paraphrase rows only where some s1 has more than its own s2.
    const anyKnown = run.result.known.per_query > 1;
    const rows = [...variants(run, ''), ...(anyKnown ? variants(run.known, ', any known paraphrase') : [])];
    const { result } = run;
    const distinct = result.distinct_s1 < result.pairs ? `, ${result.distinct_s1} distinct s1` : '';
    const title = `Retrieval: ${o.pairs} (${result.pairs} pairs${distinct} among ${result.corpus_size} sentences, ${result.index.factory})`;
    const c = result.rerank_ceiling;
    const ceilingNote = c
      ? `\nA reranker of the first ${c.depth} that put a known paraphrase first, unable to tell them apart, ` +
        `would reach top-1 ${pct(c.top1)} (the pair's own s2) and ${pct(c.top1_any_known)} (any known paraphrase, once a distinct s1).\n`
      : '';
    const n = result.first_labeled_negative;
    const negativeNote = n
      ? `\nFirst candidate labeled not a paraphrase of s1 by the data (once a distinct s1): ANN ${pct(n.ann)}` +
        n.reranked
          .map((r) => `, rerank@${o.rerankDepth}${several ? ` (${r.reranker})` : ''} ${pct(r.share)}`)
          .join('') +
        '.\n'
      : '';
    return {
      result,
      markdown: retrievalMarkdown(rows, { title }) + ceilingNote + negativeNote,
      svg: retrievalSvg(run.ann, {
        ...(run.exact ? { exact: run.exact } : {}),
        title: `Top-N retrieval: ${o.pairs}`,
      }),
    };
  },
});

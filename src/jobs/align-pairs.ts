/**
 * Document pairs from document vectors, whatever holds the documents (an index's groups: align.ts; the
 * lab's generated million: bench/src/docs-scale.ts). What is searched and how candidates are scored comes
 * from align-vectors.ts: for tfidf and hybrid, an index chosen for the number of documents (align-search.ts)
 * searched with a projection of their n-grams, plus their rare n-grams' lists (align-rare.ts), each candidate
 * re-scored exactly (align-grams.ts, align-hybrid.ts); a pair found from one side joins the other side's
 * list (addReverse), and each list is offered its best neighbours' lists (align-hops.ts); with hybrid, each
 * list's best few are scored again with their sentences' match (align-sentences.ts). The band is read
 * from each document's nearest (align-band.ts), near copies collapse (align-copies.ts), and each document
 * keeps at most `partners` pairs inside the band, best first.
 * Distributed (queue/align.ts): between the index and the rest, workers search shares of the documents into
 * the work directory (alignShare), and this process reads them back as it reads a run cut short.
 */
import { sha256 } from '../durable.js';
import { ParamineError } from '../errors.js';
import { type AlignBand, alignBand } from './align-band.js';
import { AlignCheckpoint, type Resumed } from './align-checkpoint.js';
import { type CopyGroup, copyGroups, copyRepresentatives } from './align-copies.js';
import { addNeighboursOfNeighbours } from './align-hops.js';
import type { AlignOptions } from './align-options.js';
import { RARE_DEFAULTS, RARE_DEPTH } from './align-rare.js';
import { checkKeys, compatible } from './align-scope.js';
import type { ScoreShare } from './align-score.js';
import {
  addReverse,
  DocIndex,
  type NearestOptions,
  type NeighbourOptions,
  type Neighbours,
  PROBE_FACTOR,
  SEARCH_BATCH,
} from './align-search.js';
import { matchSentences } from './align-sentences.js';
import { type AlignProgress, type DocumentSet, documentVectors } from './align-vectors.js';

export type { AlignProgress, DocumentSet } from './align-vectors.js';

export interface DocPair {
  a: string;
  b: string;
  score: number;
}

/**
 * Candidates searched per document before their exact scores pick the best. The TF-IDF projection's noise
 * (~1/sqrt(dim)) lets chance documents outrank a partner among a million: 64 deep found them where 8 did not.
 * The joint vectors (hybrid) rank by nearly the score itself: at 10^6 lab documents 24 deep lost 0.002 of the
 * planted partners that 64 found, for the exact scoring of 40 candidates a document, not 80: the time goes to
 * more rare keys instead (RARE_DEFAULTS; docs/benchmarks/documents.md).
 */
const DEPTH = { projection: 64, joint: 24 } as const;

export interface AlignHooks extends Omit<NearestOptions, 'checkpoint' | 'onProgress'> {
  onProgress?: AlignProgress | undefined;
  /**
   * A directory for the work of a run cut short (align-checkpoint.ts): the index and the searched batches
   * are kept there and read back by the next run on the same documents with the same options.
   */
  work?: string | undefined;
  /**
   * A distributed alignment (queue/align.ts): called once the document index is kept in `work`, to have
   * workers search its batches there (alignShare); returns when they are done or given up.
   */
  distribute?: ((plan: SharePlan) => Promise<void>) | undefined;
  /**
   * hybrid: search vectors whose inner product estimates the hybrid score (jointVectors; the default), or
   * (false) the TF-IDF projection alone, whose candidates the hybrid score re-ranks. At 10^6 documents the
   * joint search's candidates held 0.957 of the planted pairs against 0.914 (lab docs-scale-mine, methods
   * hybrid-joint and hybrid; docs/benchmarks/documents.md).
   */
  jointSearch?: boolean | undefined;
}

/** What a coordinator hands its workers: the input's fingerprint, and the batches to search. */
export interface SharePlan {
  fingerprint: string;
  /** Documents; shares are whole batches of `batch` documents (the last may be short). */
  count: number;
  batch: number;
  /** Whether the batch starting at document `from` is searched and kept. */
  done(from: number): boolean;
}

export interface Alignment {
  /** Best first. */
  pairs: DocPair[];
  /** Near-copy groups (scores at or above the band's max): the document that stood for each in `pairs`. */
  copies: CopyGroup[];
  /** The band used, where its edges came from, and the nearest partners' histogram it was chosen on. */
  band: AlignBand;
  /** Each document's nearest documents (candidates), scored, best first: what the pairs were chosen from. */
  nearest?: Neighbours;
  /** With `work`: what was read back from a run cut short. */
  resumed?: Resumed;
}

/** Document pairs inside the band, at most `partners` per document, best first. */
export async function alignDocumentSet(
  set: DocumentSet,
  o: AlignOptions,
  hooks: AlignHooks = {},
): Promise<Alignment> {
  if (o.min !== undefined && o.max !== undefined && o.min >= o.max)
    throw new ParamineError('BAD_INPUT', 'the band is empty: give min below max', { field: 'min' });
  if (set.count < 2) return { pairs: [], band: alignBand([], o, o.autoBand), copies: [] };
  checkKeys(set, o);
  const { index, search, share, k, checkpoint, print } = await prepare(set, o, hooks, hooks.work);
  try {
    if (hooks.distribute !== undefined && checkpoint !== undefined) {
      await hooks.distribute({
        fingerprint: print,
        count: set.count,
        batch: SEARCH_BATCH,
        done: (from) => index.searched(checkpoint, from, k),
      });
    }
    const all = Int32Array.from({ length: set.count }, (_, r) => r);
    // Batches the workers searched are read back; any they gave up on is searched here.
    const first = await index.neighbours(all, k, { ...search, checkpoint });
    addReverse(first);
    if (search.rescore !== undefined) {
      const onHop =
        hooks.onProgress && ((done: number, total: number) => hooks.onProgress?.('neighbours', done, total));
      await addNeighboursOfNeighbours(first, search.rescore, { onProgress: onHop, share });
    }
    const fits = (i: number, j: number) => compatible(set.meta(i), set.meta(j), o);
    const match = sentencePass(set, o, fits, hooks.onProgress);
    await match?.(first);
    const matched = match && first.ids.slice();
    // The band is chosen on each document's nearest compatible neighbour (its second: what chance gives it).
    const nearest = nearestScores(first, fits);
    const band = alignBand(nearest.first, o, o.autoBand, nearest.second);
    if (band.min >= band.max) {
      throw new ParamineError(
        'BAD_INPUT',
        `the band [${band.min}, ${band.max}) is empty: give min below max`,
        {
          field: o.min === undefined ? 'max' : 'min',
        },
      );
    }
    const rep = copyRepresentatives(first, set.count, band.max);
    const searchedAgain = await withoutCopies(first, rep, index, search);
    // Lists searched again without copies get the pass the others had (copies not offered).
    if (search.rescore !== undefined && searchedAgain.length > 0) {
      await addNeighboursOfNeighbours(first, search.rescore, {
        rows: searchedAgain,
        keep: (j) => rep[j] === j,
        share,
      });
    }
    // Lists the copies' pass changed are matched again, their base scores read afresh (entries of both kinds).
    if (match !== undefined && matched !== undefined && searchedAgain.length > 0)
      await match(first, changedRows(first, matched), search.rescore);
    addReverse(first, (i) => rep[i] === i);
    const idOf = (i: number) => set.id(i);
    const kept = (i: number, j: number) => rep[i] === i && rep[j] === j && fits(i, j);
    return {
      pairs: inBand(first, kept, band, o.partners, idOf),
      band,
      copies: copyGroups(rep, idOf),
      nearest: first,
      ...(checkpoint === undefined ? {} : { resumed: checkpoint.resumed }),
    };
  } finally {
    await index.close();
  }
}

/**
 * Method hybrid's last step where the documents' sentences can be read (align-sentences.ts): each list's best
 * candidates scored by the mean of their hybrid score and their sentences' match.
 */
function sentencePass(
  set: DocumentSet,
  o: AlignOptions,
  fits: (i: number, j: number) => boolean,
  onProgress: AlignProgress | undefined,
) {
  const read = set.sentences;
  if (o.method !== 'hybrid' || read === undefined) return undefined;
  return (found: Neighbours, rows?: ArrayLike<number>, base?: NeighbourOptions['rescore']) =>
    matchSentences(found, read, {
      fits,
      ...(rows === undefined ? {} : { rows }),
      ...(base === undefined ? {} : { base }),
      onProgress: onProgress && ((done, total) => onProgress('sentences', done, total)),
    });
}

/** The rows of `found` whose ids are not those of `before`. */
function changedRows(found: Neighbours, before: Int32Array): number[] {
  const { k, ids } = found;
  const rows: number[] = [];
  for (let r = 0; r < found.docs.length; r++) {
    for (let h = 0; h < k; h++) {
      if (ids[r * k + h] !== before[r * k + h]) {
        rows.push(r);
        break;
      }
    }
  }
  return rows;
}

/** A worker's part of a distributed alignment: the coordinator's index, read from the shared work directory. */
export interface AlignShare {
  /** Rows [from, to) searched and kept in the work directory (from: a multiple of `SEARCH_BATCH`). */
  search(from: number, to: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The documents made ready to search a share of them, as the coordinator whose checkpoint `work` holds
 * made them: the same documents and options give the same fingerprint, anything else is refused.
 */
export async function alignShare(
  set: DocumentSet,
  o: AlignOptions,
  work: string,
  hooks: Pick<AlignHooks, 'maxRamBytes'> = {},
): Promise<AlignShare> {
  const { index, search, k, checkpoint } = await prepare(set, o, hooks, work, true);
  return {
    search: async (from, to) => {
      // The coordinator reads batch files by their first document: a share must start one.
      if (from % SEARCH_BATCH !== 0 || to <= from) {
        throw new ParamineError('BAD_INPUT', `a share is whole batches of ${SEARCH_BATCH} documents`, {
          field: 'from',
        });
      }
      const all = Int32Array.from({ length: set.count }, (_, r) => r);
      await index.neighbours(all, k, { ...search, checkpoint, share: { from, to } });
    },
    close: () => index.close(),
  };
}

/** The documents' vectors and exact scores, the checkpoint (made, or joined by a worker) and the index. */
async function prepare(
  set: DocumentSet,
  o: AlignOptions,
  hooks: Pick<AlignHooks, 'maxRamBytes' | 'onProgress' | 'jointSearch'>,
  work: string | undefined,
  join = false,
): Promise<{
  index: DocIndex;
  search: NeighbourOptions;
  /** What a worker thread reads to score as search.rescore does. */
  share: (() => ScoreShare) | undefined;
  k: number;
  checkpoint: AlignCheckpoint | undefined;
  /** The input's fingerprint (the checkpoint's). */
  print: string;
}> {
  const joint = o.method === 'hybrid' && hooks.jointSearch !== false;
  const { vectors, rescore, more, share, digest } = await documentVectors(set, o, hooks.onProgress, joint);
  // Room for the band and the scope to drop candidates before `partners` are found.
  const k = o.partners * 8;
  const search = { rescore, more, depth: Math.max(k, DEPTH[joint ? 'joint' : 'projection']) };
  const print = fingerprint(digest, set.count, o, search.depth, hooks.maxRamBytes, joint);
  const checkpoint =
    work === undefined
      ? undefined
      : join
        ? AlignCheckpoint.join(work, print)
        : await AlignCheckpoint.open(work, print);
  const index = await DocIndex.open(vectors, set.count, {
    maxRamBytes: hooks.maxRamBytes,
    onProgress: hooks.onProgress,
    checkpoint,
  });
  return { index, search, share, k, checkpoint, print };
}

/**
 * The rows whose candidates held near copies (documents another stands for) searched again with every copy
 * excluded, so copies never crowd out a document's partners; the other rows' lists are what that search
 * would give already. Returns the rows searched again.
 */
async function withoutCopies(
  found: Neighbours,
  rep: Int32Array,
  index: DocIndex,
  search: NeighbourOptions,
): Promise<number[]> {
  const exclude = new Uint8Array(Math.ceil(rep.length / 8));
  let copies = 0;
  rep.forEach((r, i) => {
    if (r === i) return;
    exclude[i >> 3] = (exclude[i >> 3] as number) | (1 << (i & 7));
    copies++;
  });
  if (copies === 0) return [];
  const { docs, k, ids, scores } = found;
  const crowded: number[] = [];
  for (let r = 0; r < docs.length; r++) {
    if (rep[docs[r] as number] !== docs[r]) continue;
    for (let h = 0; h < k; h++) {
      const j = ids[r * k + h] as number;
      if (j >= 0 && rep[j] !== j) {
        crowded.push(r);
        break;
      }
    }
  }
  const rows = Int32Array.from(crowded, (r) => docs[r] as number);
  const again = await index.neighbours(rows, k, { ...search, exclude });
  crowded.forEach((r, x) => {
    ids.set(again.ids.subarray(x * k, (x + 1) * k), r * k);
    scores.set(again.scores.subarray(x * k, (x + 1) * k), r * k);
  });
  return crowded;
}

/**
 * Each document's nearest compatible neighbour's score and its second's (NaN: none); documents with no
 * compatible one among their candidates are left out.
 */
function nearestScores(
  found: Neighbours,
  fits: (i: number, j: number) => boolean,
): { first: number[]; second: number[] } {
  const [first, second]: [number[], number[]] = [[], []];
  const { docs, k, ids, scores } = found;
  for (let r = 0; r < docs.length; r++) {
    const best: number[] = [];
    for (let h = 0; h < k && best.length < 2; h++) {
      const j = ids[r * k + h] as number;
      if (j >= 0 && fits(docs[r] as number, j)) best.push(scores[r * k + h] as number);
    }
    if (best.length === 0) continue;
    first.push(best[0] as number);
    second.push(best[1] ?? Number.NaN);
  }
  return { first, second };
}

/** The pairs inside [min, max), each once, best first, each document keeping at most `partners`. */
function inBand(
  found: Neighbours,
  fits: (i: number, j: number) => boolean,
  band: AlignBand,
  partners: number,
  idOf: (i: number) => string,
): DocPair[] {
  const { docs, k, ids, scores } = found;
  const inside: number[] = [];
  for (let x = 0; x < ids.length; x++) {
    const j = ids[x] as number;
    const score = scores[x] as number;
    if (j < 0 || score < band.min || score >= band.max) continue;
    if (fits(docs[Math.floor(x / k)] as number, j)) inside.push(x);
  }
  const order = Uint32Array.from(inside).sort((x, y) => (scores[y] as number) - (scores[x] as number));
  const taken = new Map<number, number>();
  const seen = new Set<number>();
  const n = docs.reduce((m, d) => Math.max(m, d + 1), 0);
  const out: DocPair[] = [];
  for (const x of order) {
    const i = docs[Math.floor(x / k)] as number;
    const j = ids[x] as number;
    const key = Math.min(i, j) * n + Math.max(i, j);
    if (seen.has(key) || (taken.get(i) ?? 0) >= partners || (taken.get(j) ?? 0) >= partners) continue;
    seen.add(key);
    taken.set(i, (taken.get(i) ?? 0) + 1);
    taken.set(j, (taken.get(j) ?? 0) + 1);
    out.push({ a: idOf(i), b: idOf(j), score: Math.round((scores[x] as number) * 1e6) / 1e6 });
  }
  return out;
}

/**
 * What a checkpoint's work depends on: the documents (their texts or vectors, in order), their number and
 * the options that shape the index and the lists (the band, scopes and partners are applied afterwards).
 */
function fingerprint(
  digest: string,
  count: number,
  o: AlignOptions,
  depth: number,
  ram: number | undefined,
  joint: boolean,
): string {
  // The rare lists' options and the lists probed are constants of the code, not options: a version that
  // changes them finds other lists, so its runs never resume an older one's. `joint` only for hybrid's search.
  const shape = {
    method: o.method,
    dim: o.dim,
    k: o.partners * 8,
    depth,
    rare: RARE_DEPTH,
    rareKeys: RARE_DEFAULTS,
    probes: PROBE_FACTOR,
    ram,
    ...(joint ? { joint } : {}),
  };
  return sha256(`${digest}\n${count}\n${JSON.stringify(shape)}`);
}

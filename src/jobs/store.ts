/**
 * Persistent jobs in their own LMDB environment (apart from the read-only index store): job records,
 * their result pairs by sequence number, the unordered pair keys already accepted, and clusters. Each
 * batch commits its pairs, their keys and the advanced cursor in one transaction, so a kill at any point
 * resumes at a batch boundary with no pair lost and none duplicated.
 */
import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Database, open, type RootDatabase } from 'lmdb';
import { ParamineError } from '../errors.js';
import type { LexicalMeasures } from '../search/lexical.js';
import type { Meta } from '../store/index.js';
import { checkLmdbFile, DirLock, inTxn, lmdbWrite } from '../store/index.js';
import type { JobSpec } from './spec.js';

export type JobState = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
export const FINISHED: readonly JobState[] = ['done', 'failed', 'cancelled'];

export interface JobRecord {
  id: string;
  spec: JobSpec;
  /** The index mined: its name and what identifies its content (a resumed job checks it). */
  index: { name: string; identity: string };
  state: JobState;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  /** Query sentences in scope, and how many are done (the resume cursor). */
  total: number;
  processed: number;
  pairs: number;
  clusters?: number;
  /** Running time summed over restarts, for the rate. */
  runMs: number;
  /** A stage before mining (document alignment) while it runs: its name and progress. */
  stage?: { name: string; done: number; total: number };
  error?: { code: string; message: string };
}

export interface PairSide {
  /** Sentence id in the index; null for a query sentence that is not in it. */
  id: number | null;
  text: string;
  meta?: Meta;
}

export interface MinedPair {
  a: PairSide;
  b: PairSide;
  cosine: number;
  margin?: number;
  label?: string;
  probabilities?: Record<string, number>;
  /** The model that labeled the pair (the student, or the teacher where the cascade sent it). */
  labeledBy?: string;
  lexical: LexicalMeasures;
  /**
   * A sub-sentence pair: the part of side `side` that paraphrases the other side, as character offsets
   * into that side's text, with its cosine to the other side.
   */
  span?: { side: 'a' | 'b'; start: number; end: number; cosine: number; method: string; score?: number };
  /** BERTScore F1, when the job filtered on it. */
  bertScore?: number;
  /** With a domain: both sides' σ and weight, and the weighted / combined score. */
  domain?: { a: { sigma: number; weight: number }; b: { sigma: number; weight: number }; score?: number };
}

type SeqKey = [string, number];
/** A job's fixed query sentences: ids as little-endian uint32, and where the new ones of `since` start. */
type StoredQueries = { first: number; ids: Buffer };
type PairKeyKey = [string, string];

export class JobStore {
  private readonly root: RootDatabase;
  private readonly jobs: Database<JobRecord, string>;
  private readonly results: Database<MinedPair, SeqKey>;
  private readonly seen: Database<true, PairKeyKey>;
  private readonly clusterDb: Database<number[], SeqKey>;
  private closed = false;
  /** Emits `job` with the job's id after every write of its record (progress, state): live progress. */
  readonly changes = new EventEmitter<{ job: [id: string] }>().setMaxListeners(0);

  private readonly lock: DirLock | undefined;
  private readonly queryDb: Database<StoredQueries, string>;

  private constructor(
    root: RootDatabase,
    lock: DirLock | undefined,
    /** The job directory (jobs.lmdb, and a document-pairs job's alignment work while it runs). */
    readonly dir: string,
  ) {
    this.root = root;
    this.lock = lock;
    this.jobs = root.openDB<JobRecord, string>({ name: 'jobs', encoding: 'json' });
    this.results = root.openDB<MinedPair, SeqKey>({ name: 'results', encoding: 'msgpack' });
    this.seen = root.openDB<true, PairKeyKey>({ name: 'seen', encoding: 'msgpack' });
    this.clusterDb = root.openDB<number[], SeqKey>({ name: 'clusters', encoding: 'msgpack' });
    this.queryDb = root.openDB<StoredQueries, string>({ name: 'queries', encoding: 'msgpack' });
  }

  /**
   * The query sentences a job fixed when it was created (a `since` job: they come from a neighbourhood
   * search that later writes would change), so a resumed run reads the same ones.
   */
  async putQueries(jobId: string, first: number, ids: readonly number[]): Promise<void> {
    this.assertOpen();
    const packed = Buffer.from(Uint32Array.from(ids).buffer);
    await lmdbWrite('the job store', () => this.queryDb.put(jobId, { first, ids: packed }));
  }

  queriesOf(jobId: string): { first: number; ids: number[] } | undefined {
    this.assertOpen();
    const q = this.queryDb.get(jobId);
    if (q === undefined) return undefined;
    const bytes = Uint8Array.from(q.ids);
    return { first: q.first, ids: [...new Uint32Array(bytes.buffer, 0, bytes.byteLength / 4)] };
  }

  /** `reader`: only reads (an export beside a running service): takes no lock, writes nothing. */
  static open(dir: string, options: { reader?: boolean } = {}): JobStore {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (e) {
      throw new ParamineError('BAD_FILE', `cannot create the job directory ${dir}: ${(e as Error).message}`);
    }
    // Two services resuming the same jobs would mine them twice: one process per directory.
    const lock = options.reader ? undefined : DirLock.acquire(dir, 'the job directory');
    try {
      // A file inside `dir`: lmdb-js would take a directory named like `x.state` for a file path.
      const path = join(dir, 'jobs.lmdb');
      checkLmdbFile(path);
      const root = open({
        path,
        mapSize: 2 ** 40,
        maxDbs: 8,
        noMemInit: true,
        readOnly: options.reader === true,
      });
      return new JobStore(root, lock, dir);
    } catch (e) {
      lock?.release();
      throw new ParamineError('BAD_FILE', `cannot open the job store at ${dir}: ${(e as Error).message}`, {
        cause: e,
      });
    }
  }

  get(id: string): JobRecord | undefined {
    this.assertOpen();
    return this.jobs.get(id);
  }

  list(): JobRecord[] {
    this.assertOpen();
    return [...this.jobs.getRange({})]
      .map((e) => e.value)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async put(job: JobRecord): Promise<void> {
    this.assertOpen();
    await lmdbWrite('the job store', () => this.jobs.put(job.id, job));
    this.changes.emit('job', job.id);
  }

  hasPair(jobId: string, key: string): boolean {
    return this.seen.get([jobId, key]) !== undefined;
  }

  /** One batch: its pairs at sequence numbers job.pairs.., their keys, and the advanced record. */
  async commitBatch(
    before: JobRecord,
    pairs: ReadonlyArray<{ key: string; pair: MinedPair }>,
    after: JobRecord,
  ): Promise<void> {
    this.assertOpen();
    await lmdbWrite('the job store', () =>
      this.root.transaction(() => {
        pairs.forEach(({ key, pair }, i) => {
          inTxn(this.results.put([before.id, before.pairs + i], pair));
          inTxn(this.seen.put([before.id, key], true));
        });
        inTxn(this.jobs.put(after.id, after));
      }),
    );
    this.changes.emit('job', after.id);
  }

  /** Pairs with sequence numbers [offset, offset + limit), in order. */
  *pairs(
    jobId: string,
    offset = 0,
    limit = Number.MAX_SAFE_INTEGER,
  ): Generator<{ seq: number; pair: MinedPair }> {
    this.assertOpen();
    const end = Math.min(Number.MAX_SAFE_INTEGER, offset + limit);
    for (const { key, value } of this.results.getRange({ start: [jobId, offset], end: [jobId, end] })) {
      yield { seq: key[1], pair: value };
    }
  }

  /** Replaces the job's clusters and writes its record, in one transaction (finishing is re-runnable). */
  async writeClusters(job: JobRecord, clusters: readonly number[][]): Promise<void> {
    this.assertOpen();
    await lmdbWrite('the job store', () =>
      this.root.transaction(() => {
        for (const { key } of this.clusterDb.getRange({
          start: [job.id, 0],
          end: [job.id, Number.MAX_SAFE_INTEGER],
        }))
          inTxn(this.clusterDb.remove(key));
        for (const [i, ids] of clusters.entries()) inTxn(this.clusterDb.put([job.id, i], ids));
        inTxn(this.jobs.put(job.id, job));
      }),
    );
    this.changes.emit('job', job.id);
  }

  *clusters(
    jobId: string,
    offset = 0,
    limit = Number.MAX_SAFE_INTEGER,
  ): Generator<{ seq: number; ids: number[] }> {
    this.assertOpen();
    const end = Math.min(Number.MAX_SAFE_INTEGER, offset + limit);
    for (const { key, value } of this.clusterDb.getRange({ start: [jobId, offset], end: [jobId, end] })) {
      yield { seq: key[1], ids: value };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.root.close();
    this.lock?.release();
  }

  private assertOpen(): void {
    if (this.closed) throw new ParamineError('UNAVAILABLE', 'the job store is closed');
  }
}

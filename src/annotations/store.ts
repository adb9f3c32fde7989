/**
 * Pair annotations in their own LMDB environment (beside the jobs store, apart from the read-only index
 * store): one record per (annotator, s1, s2), in the order they were last written. Writing a pair again
 * replaces the annotator's earlier record and moves it to the end; deleting it is the page's undo.
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Database, open, type RootDatabase } from 'lmdb';
import { ParamineError } from '../errors.js';
import type { LabelMode } from '../models/ports.js';
import { checkLmdbFile, DirLock, inTxn, lmdbWrite } from '../store/index.js';
import type { AnnotationScheme, Decision } from './schemes.js';

/** One annotation; the export writes it as it is (the pair format's keys plus these extras). */
export interface Annotation {
  /** Stable for (annotator, s1, s2): the same person labeling the same pair again replaces it. */
  id: string;
  s1: string;
  s2: string;
  label: string;
  s1_id?: number;
  s2_id?: number;
  /** The API key's name when the service has keys; else what the page says, if anything. */
  annotator?: string;
  /** ISO time of the last write. */
  at: string;
  scheme: AnnotationScheme;
  decision: Decision;
  /** What the pair looked like when it was judged: the model's label and scores, the retrieval ranks. */
  predicted?: string;
  probabilities?: Record<string, number>;
  /** The model whose (calibrated) probabilities these are, and the labels mode the pair was shown under. */
  model?: string;
  mode?: LabelMode;
  cosine?: number;
  annRank?: number;
  rerankRank?: number;
  /** Where the pair came from: a search, or a mining job's pair (its id and sequence number). */
  source?: { kind: 'search' | 'job'; job?: string; seq?: number };
  /** The document context the annotator saw around each side (Turku's 3: a paraphrase in this context only). */
  context?: { s1?: SeenContext; s2?: SeenContext };
}

export interface SeenContext {
  before: string[];
  after: string[];
}

export type NewAnnotation = Omit<Annotation, 'id' | 'at'>;

export interface AnnotationQuery {
  annotator?: string;
  scheme?: AnnotationScheme;
  decision?: Decision;
  /** Only records written at or after this ISO time. */
  since?: string;
}

export interface AnnotationSummary {
  total: number;
  byScheme: Record<string, number>;
  byLabel: Record<string, number>;
  byAnnotator: Record<string, number>;
}

export function annotationId(annotator: string | undefined, s1: string, s2: string): string {
  return createHash('sha256')
    .update(`${annotator ?? ''}\u0000${s1}\u0000${s2}`)
    .digest('hex')
    .slice(0, 32);
}

const NEXT = 'next';

export class AnnotationStore {
  private readonly root: RootDatabase;
  /** seq -> record, in write order. */
  private readonly records: Database<Annotation, number>;
  /** id -> seq of its current record. */
  private readonly byId: Database<number, string>;
  private readonly meta: Database<number, string>;
  private closed = false;

  private readonly lock: DirLock;

  private constructor(root: RootDatabase, lock: DirLock) {
    this.root = root;
    this.lock = lock;
    this.records = root.openDB<Annotation, number>({ name: 'annotations', encoding: 'msgpack' });
    this.byId = root.openDB<number, string>({ name: 'by-id', encoding: 'msgpack' });
    this.meta = root.openDB<number, string>({ name: 'meta', encoding: 'msgpack' });
  }

  static open(dir: string): AnnotationStore {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (e) {
      throw new ParamineError(
        'BAD_FILE',
        `cannot create the annotation directory ${dir}: ${(e as Error).message}`,
      );
    }
    const lock = DirLock.acquire(dir, 'the annotation directory');
    try {
      const path = join(dir, 'annotations.lmdb');
      checkLmdbFile(path);
      return new AnnotationStore(open({ path, mapSize: 2 ** 36, maxDbs: 4, noMemInit: true }), lock);
    } catch (e) {
      lock.release();
      throw new ParamineError(
        'BAD_FILE',
        `cannot open the annotation store at ${dir}: ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    }
  }

  /** Writes (or replaces) the annotator's record of this pair; returns it as stored. */
  async put(input: NewAnnotation, at = new Date()): Promise<Annotation> {
    this.assertOpen();
    const id = annotationId(input.annotator, input.s1, input.s2);
    const record: Annotation = { id, ...input, at: at.toISOString() };
    await lmdbWrite('the annotation store', () =>
      this.root.transaction(() => {
        const old = this.byId.get(id);
        if (old !== undefined) inTxn(this.records.remove(old));
        const seq = this.meta.get(NEXT) ?? 0;
        inTxn(this.records.put(seq, record));
        inTxn(this.byId.put(id, seq));
        inTxn(this.meta.put(NEXT, seq + 1));
      }),
    );
    return record;
  }

  get(id: string): Annotation | undefined {
    this.assertOpen();
    const seq = this.byId.get(id);
    return seq === undefined ? undefined : this.records.get(seq);
  }

  /** Removes a record; returns it, or undefined when there was none. */
  async remove(id: string): Promise<Annotation | undefined> {
    this.assertOpen();
    let removed: Annotation | undefined;
    await lmdbWrite('the annotation store', () =>
      this.root.transaction(() => {
        const seq = this.byId.get(id);
        if (seq === undefined) return;
        removed = this.records.get(seq);
        inTxn(this.records.remove(seq));
        inTxn(this.byId.remove(id));
      }),
    );
    return removed;
  }

  /** Records in write order (oldest first), filtered; `reverse` gives the newest first. */
  *list(q: AnnotationQuery = {}, options: { reverse?: boolean } = {}): Generator<Annotation> {
    this.assertOpen();
    for (const { value } of this.records.getRange({ reverse: options.reverse ?? false })) {
      if (q.annotator !== undefined && value.annotator !== q.annotator) continue;
      if (q.scheme !== undefined && value.scheme !== q.scheme) continue;
      if (q.decision !== undefined && value.decision !== q.decision) continue;
      if (q.since !== undefined && value.at < q.since) continue;
      yield value;
    }
  }

  summary(q: AnnotationQuery = {}): AnnotationSummary {
    const out: AnnotationSummary = { total: 0, byScheme: {}, byLabel: {}, byAnnotator: {} };
    const bump = (m: Record<string, number>, k: string) => {
      m[k] = (m[k] ?? 0) + 1;
    };
    for (const a of this.list(q)) {
      out.total++;
      bump(out.byScheme, a.scheme);
      bump(out.byLabel, `${a.scheme}:${a.label}`);
      bump(out.byAnnotator, a.annotator ?? '');
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.root.close();
    this.lock.release();
  }

  private assertOpen(): void {
    if (this.closed) throw new ParamineError('UNAVAILABLE', 'the annotation store is closed');
  }
}

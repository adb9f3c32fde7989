/**
 * What a long alignment keeps on disk so that a run cut short (a crash, a SIGKILL, the end of a session)
 * goes on where it stopped: the trained and filled document index, then each search batch's nearest lists
 * as it is done. Every file is written whole (written beside, renamed); a file that is missing or of the
 * wrong size is work still to do. The directory belongs to one input: `state.json` holds a fingerprint of
 * the documents' texts (or vectors) and of the options that shape the search, and a run with another
 * fingerprint starts the directory afresh. At 10^6 documents the search is ~75% of the time
 * (docs/benchmarks/documents.md), 62 batches of 16,384 documents.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../durable.js';
import { ParamineError } from '../errors.js';
import { writeIndexFile } from '../index/index.js';
import { type FaissIndex, readIndex } from '../native/index.js';

const STATE = 'state.json';
const INDEX = 'index.faiss';
const VERSION = 1;

const stateSchema = z.object({
  version: z.literal(VERSION),
  fingerprint: z.string(),
  factory: z.string().optional(),
});

/** What a resumed run found already done. */
export interface Resumed {
  index: boolean;
  /** Documents whose nearest lists were read back. */
  searched: number;
}

export class AlignCheckpoint {
  readonly resumed: Resumed = { index: false, searched: 0 };

  private constructor(
    readonly dir: string,
    private readonly fingerprint: string,
    private factory: string | undefined,
    /** A worker's share of a distributed alignment: it searches batches, never replaces the index. */
    private readonly joined = false,
  ) {}

  /** The checkpoint in `dir` for this input (`fingerprint`): what an earlier run of it left, else a fresh one. */
  static async open(dir: string, fingerprint: string): Promise<AlignCheckpoint> {
    const state = readState(dir);
    if (state?.fingerprint === fingerprint) return new AlignCheckpoint(dir, fingerprint, state.factory);
    // Another input's work (or none): nothing of it applies.
    await removeOurs(dir);
    await mkdir(dir, { recursive: true });
    const fresh = new AlignCheckpoint(dir, fingerprint, undefined);
    await fresh.#writeState();
    return fresh;
  }

  /**
   * The checkpoint a coordinator made for this input, as a worker of a distributed alignment joins it: its
   * index must be there, and nothing of it is cleared (another fingerprint is another input: refused).
   */
  static join(dir: string, fingerprint: string): AlignCheckpoint {
    const state = readState(dir);
    if (state?.fingerprint !== fingerprint || state.factory === undefined || !existsSync(join(dir, INDEX))) {
      throw new ParamineError(
        'CONFLICT',
        `${dir} holds no document index for these documents: the index changed since \`docs align --queue\` started, or the work directory is not the one it shares (run that command again)`,
        { field: 'work' },
      );
    }
    return new AlignCheckpoint(dir, fingerprint, state.factory, true);
  }

  /** The saved index when it was built with `factory` (the index the plan chooses now), read into memory. */
  async index(factory: string): Promise<FaissIndex | undefined> {
    if (this.factory !== factory || !existsSync(join(this.dir, INDEX))) return undefined;
    const index = await readIndex(join(this.dir, INDEX));
    this.resumed.index = true;
    return index;
  }

  /** A new index: lists searched in another (one not read back) are dropped before it is kept. */
  async saveIndex(index: FaissIndex, factory: string): Promise<void> {
    if (this.joined) {
      throw new ParamineError(
        'CONFLICT',
        `this worker would build a document index (${factory}) other than the one in ${this.dir} (${this.factory}): give it the coordinator's options`,
      );
    }
    await removeOurs(this.dir, /^search-\d+\.bin/);
    await writeIndexFile(index, join(this.dir, INDEX));
    this.factory = factory;
    await this.#writeState();
  }

  /** Batch `from`'s saved rows (`width` ids and scores a document, `count` documents), if it was done. */
  batch(from: number, count: number, width: number): { ids: Int32Array; scores: Float32Array } | undefined {
    const cells = count * width;
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.#batchPath(from));
    } catch {
      return undefined;
    }
    if (bytes.byteLength !== cells * 8) return undefined;
    // Its own buffer, aligned for the typed views (a Buffer may sit at any offset of a shared one).
    const copy = new Uint8Array(bytes.byteLength);
    copy.set(bytes);
    this.resumed.searched += count;
    return {
      ids: new Int32Array(copy.buffer, 0, cells),
      scores: new Float32Array(copy.buffer, cells * 4, cells),
    };
  }

  /** Whether batch `from` is done (its file there, whole), without reading it. */
  has(from: number, count: number, width: number): boolean {
    try {
      return statSync(this.#batchPath(from)).size === count * width * 8;
    } catch {
      return false;
    }
  }

  async saveBatch(from: number, ids: Int32Array, scores: Float32Array): Promise<void> {
    const bytes = new Uint8Array(ids.byteLength + scores.byteLength);
    bytes.set(new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength));
    bytes.set(new Uint8Array(scores.buffer, scores.byteOffset, scores.byteLength), ids.byteLength);
    await writeFileAtomic(this.#batchPath(from), bytes);
  }

  #batchPath(from: number): string {
    return join(this.dir, `search-${from}.bin`);
  }

  #writeState(): Promise<void> {
    const state = { version: VERSION, fingerprint: this.fingerprint, factory: this.factory };
    return writeFileAtomic(join(this.dir, STATE), `${JSON.stringify(state)}\n`);
  }
}

/** Once the output is written: the checkpoint's files are no longer needed (the directory goes when empty). */
export async function clearCheckpoint(dir: string): Promise<void> {
  await removeOurs(dir);
  await rmdir(dir).catch(() => {});
}

/** The files a checkpoint writes (and their temporaries); nothing else in `dir` is touched. */
const OURS = /^(state\.json|index\.faiss|search-\d+\.bin)(\.tmp-\d+)?$/;

/** The checkpoint's files in `dir` (those `only` matches too) removed. */
async function removeOurs(dir: string, only = /./): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const ours = names.filter((f) => OURS.test(f) && only.test(f));
  await Promise.all(ours.map((f) => rm(join(dir, f), { force: true })));
}

function readState(dir: string): z.output<typeof stateSchema> | undefined {
  try {
    return stateSchema.parse(JSON.parse(readFileSync(join(dir, STATE), 'utf8')));
  } catch {
    return undefined;
  }
}

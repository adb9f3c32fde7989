/**
 * A serving process that follows its index's structure (issue #51). `paramine index --compact`, run beside
 * it (its IN-USE mark says it follows: store/index-lock.ts; a rebuild is still refused), writes the new shards
 * beside the old ones, moves them in with the manifest last, folds the store and the updates, and releases
 * the structure lock. Meanwhile the service answers from the shards and segments it has open (files
 * replaced or removed under it stay readable to it: an open or mapped file outlives its name), and the
 * writes it takes get ids after the rewrite's last one. Once the lock is free and no move is left half done,
 * the next look (the writes' follower, each second, and every seal before it reads where to start) opens
 * the new generation and swaps it in at once (LiveIndex.rebase): no request fails or waits for it.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import {
  type LiveIndex,
  MANIFEST_FILE,
  type Manifest,
  readManifest,
  type ShardedIndex,
} from '../index/index.js';
import { settling } from '../indexer/generation.js';
import type { AnnIndex } from '../search/core.js';

/** The shards searched now, as something searchable with a count (a later generation's once taken up). */
export function currentShards(live: LiveIndex): AnnIndex & { readonly ntotal: number } {
  return {
    search: (queries, k) => live.base.search(queries, k),
    dim: live.dim,
    metric: live.metric,
    get ntotal() {
      return live.base.ntotal;
    },
  };
}

export interface GenerationParts {
  /** The index's shards as they are on disk now, checked as at start-up. */
  open(): Promise<ShardedIndex>;
  /** Told the new manifest once its shards are the ones searched. */
  onSwitch(manifest: Manifest): void;
  /** Whether something may still read retired shards (a running job holds them): they are closed later. */
  busy(): boolean;
}

export class Generations {
  /** The manifest file last looked at (inode and change time): unchanged, a look costs one stat. */
  #seen: string;
  #retired: ShardedIndex[] = [];

  constructor(
    private readonly dir: string,
    private readonly live: LiveIndex,
    private readonly parts: GenerationParts,
  ) {
    this.#seen = this.#stamp();
  }

  /** Swaps in a newer generation of the shards if a whole one landed; true when it did. */
  async next(): Promise<boolean> {
    await this.#closeRetired();
    const stamp = this.#stamp();
    if (stamp === this.#seen) return false;
    // Not whole yet: a rewrite still running, or one cut short mid-move (the next run finishes it).
    if (settling(this.dir)) return false;
    const manifest = await readManifest(this.dir);
    if (manifest.createdAt === this.live.base.manifest.createdAt) {
      this.#seen = stamp;
      return false;
    }
    const next = await this.parts.open();
    if (this.#stamp() !== stamp || next.manifest.createdAt !== manifest.createdAt) {
      await next.close(); // another rewrite moved in while this one opened: the next look takes that
      return false;
    }
    this.#retired.push(await this.live.rebase(next));
    this.#seen = stamp;
    this.parts.onSwitch(next.manifest);
    await this.#closeRetired();
    return true;
  }

  /** Closes the retired shards (the ones searched now are closed by their owner). */
  async close(): Promise<void> {
    await Promise.all(this.#retired.splice(0).map((s) => s.close()));
  }

  async #closeRetired(): Promise<void> {
    if (this.#retired.length > 0 && !this.parts.busy()) await this.close();
  }

  #stamp(): string {
    const s = statSync(join(this.dir, MANIFEST_FILE), { throwIfNoEntry: false });
    return s === undefined ? '' : `${s.ino}:${s.ctimeMs}`;
  }
}

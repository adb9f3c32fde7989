/**
 * The domains of a served index: domains.json re-read when it changes (a domain added while the service
 * runs is usable at once), columns memory-mapped on first use, scorers (for sentences that are not in
 * the index, such as HTTP queries) loaded on first use. Sentences added after a domain's columns were
 * written (POST /v1/sentences, `paramine add`) are scored by its scorer from their text and embedding
 * the first time a search or job meets them, and remembered.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Column } from './column.js';
import {
  type CombinedModel,
  DOMAINS_FILE,
  type DomainEntry,
  domainDir,
  readDomains,
  requireDomain,
  SIGMA_FILE,
  WEIGHT_FILE,
} from './manifest.js';
import { type DomainScorer, loadScorer } from './scorer.js';

/** An added sentence's text and embedding (undefined: no such sentence), for ids past a domain's columns. */
export type AddedRow = (id: number) => { text: string; vector: Float32Array } | undefined;

export class OpenDomain {
  readonly entry: DomainEntry;
  readonly sigma: Column;
  readonly weight: Column;
  private readonly dir: string;
  #scorer: Promise<DomainScorer> | undefined;
  #loaded: DomainScorer | undefined;
  readonly #addedRow: AddedRow | undefined;
  readonly #added = new Map<number, { sigma: number; weight: number }>();

  constructor(entry: DomainEntry, dir: string, sigma: Column, weight: Column, addedRow?: AddedRow) {
    this.entry = entry;
    this.dir = dir;
    this.sigma = sigma;
    this.weight = weight;
    this.#addedRow = addedRow;
  }

  /**
   * σ and weight of an index sentence: its column rows, or for a sentence added after the columns were
   * written, its scorer's (NaN for both when there is no such sentence, or before `scorer()` resolved).
   */
  score(id: number): { sigma: number; weight: number } {
    if (id < this.entry.count) return { sigma: this.sigma.get(id), weight: this.weight.get(id) };
    const known = this.#added.get(id);
    if (known !== undefined) return known;
    const scorer = this.#loaded;
    const row = scorer === undefined ? undefined : this.#addedRow?.(id);
    if (scorer === undefined || row === undefined) return { sigma: Number.NaN, weight: Number.NaN };
    const scored = scorer.score([row.text], row.vector);
    const out = { sigma: scored.sigma[0] as number, weight: scored.weight[0] as number };
    this.#added.set(id, out);
    return out;
  }

  get name(): string {
    return this.entry.name;
  }

  get combined(): CombinedModel | undefined {
    return this.entry.combined;
  }

  /** The scorer, for sentences without a row (loaded once). */
  scorer(): Promise<DomainScorer> {
    this.#scorer ??= loadScorer(this.dir, this.entry.method).then((s) => {
      this.#loaded = s;
      return s;
    });
    return this.#scorer;
  }
}

export class Domains {
  readonly indexDir: string;
  #identity: string;
  private entries: Record<string, DomainEntry> = {};
  private mtimeMs = -1;
  private readonly open = new Map<string, { entry: DomainEntry; domain: Promise<OpenDomain> }>();

  readonly #addedRow: AddedRow | undefined;

  constructor(indexDir: string, identity: string, addedRow?: AddedRow) {
    this.indexDir = indexDir;
    this.#identity = identity;
    this.#addedRow = addedRow;
  }

  /** The index build the domains are checked against. */
  get identity(): string {
    return this.#identity;
  }

  /** The index took up a compaction's or rebuild's shards: domains carried over to it are the valid ones now. */
  follow(identity: string): void {
    this.#identity = identity;
  }

  /** Every domain listed for the index (re-reading domains.json if it changed). */
  async list(): Promise<DomainEntry[]> {
    await this.refresh();
    return Object.values(this.entries);
  }

  /** The domain `name`, checked against this index build (NOT_FOUND, CONFLICT otherwise). */
  async get(name: string, field = 'domain.name'): Promise<OpenDomain> {
    await this.refresh();
    const entry = requireDomain(this.entries, name, this.identity, field);
    const cached = this.open.get(name);
    if (cached && cached.entry === entry) return cached.domain;
    const dir = domainDir(this.indexDir, name);
    const domain = (async () => {
      const [sigma, weight] = await Promise.all([
        Column.open(join(dir, SIGMA_FILE), entry.count),
        Column.open(join(dir, WEIGHT_FILE), entry.count),
      ]);
      const domain = new OpenDomain(entry, dir, sigma, weight, this.#addedRow);
      // Loaded before first use when sentences may have been added: score() is synchronous.
      if (this.#addedRow !== undefined) await domain.scorer();
      return domain;
    })();
    this.open.set(name, { entry, domain });
    domain.catch(() => this.open.delete(name));
    return domain;
  }

  private async refresh(): Promise<void> {
    const m = await stat(join(this.indexDir, DOMAINS_FILE)).then(
      (s) => s.mtimeMs,
      () => 0,
    );
    if (m === this.mtimeMs) return;
    this.entries = await readDomains(this.indexDir);
    this.mtimeMs = m;
  }
}

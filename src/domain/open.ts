/**
 * The domains of a served index: domains.json re-read when it changes (a domain added while the service
 * runs is usable at once), columns memory-mapped on first use, scorers (for sentences that are not in
 * the index, such as HTTP queries) loaded on first use.
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

export class OpenDomain {
  readonly entry: DomainEntry;
  readonly sigma: Column;
  readonly weight: Column;
  private readonly dir: string;
  #scorer: Promise<DomainScorer> | undefined;

  constructor(entry: DomainEntry, dir: string, sigma: Column, weight: Column) {
    this.entry = entry;
    this.dir = dir;
    this.sigma = sigma;
    this.weight = weight;
  }

  get name(): string {
    return this.entry.name;
  }

  get combined(): CombinedModel | undefined {
    return this.entry.combined;
  }

  /** The scorer, for sentences without a row (loaded once). */
  scorer(): Promise<DomainScorer> {
    this.#scorer ??= loadScorer(this.dir, this.entry.method);
    return this.#scorer;
  }
}

export class Domains {
  readonly indexDir: string;
  readonly identity: string;
  private entries: Record<string, DomainEntry> = {};
  private mtimeMs = -1;
  private readonly open = new Map<string, { entry: DomainEntry; domain: Promise<OpenDomain> }>();

  constructor(indexDir: string, identity: string) {
    this.indexDir = indexDir;
    this.identity = identity;
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
      return new OpenDomain(entry, dir, sigma, weight);
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

/**
 * Domains across `paramine index --rebuild` (issue #30): a rebuild keeps every id but is a new build of the
 * index, so each domain scored on the index before it is carried over to the rebuilt one instead of being
 * added again: its columns are extended to the new count, the sentences added since are scored by the
 * domain's own scorer (their text from the store, their embedding from the rebuilt vectors.f16), deleted
 * sentences become NaN (never kept, left out of the distribution), the distribution is measured again,
 * and the entry moves to the new index identity. Each domain is written to domains/.NAME.building and
 * installed as `paramine domain add` installs one; running it again redoes what a crash cut short.
 */
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Manifest, VectorFile } from '../index/index.js';
import type { RebuildFollowers } from '../indexer/generation.js';
import { SentenceStore, STORE_DIR } from '../store/index.js';
import { installDomain } from './add.js';
import { Column, ColumnWriter } from './column.js';
import { sigmaStats } from './distribution.js';
import {
  DOMAINS_DIR,
  type DomainEntry,
  domainDir,
  indexIdentity,
  putDomain,
  readDomains,
  SIGMA_FILE,
  WEIGHT_FILE,
} from './manifest.js';
import { type DomainScorer, loadScorer } from './scorer.js';

const CHUNK = 16_384;

/**
 * Carries the domains scored on the index `manifest` (a rebuilt one) was rebuilt from over to it; `deleted`:
 * the ids the rebuild removed. Returns the names carried.
 */
export async function carryDomains(
  indexDir: string,
  manifest: Manifest,
  deleted: ReadonlySet<number>,
): Promise<string[]> {
  const entries = await entriesToCarry(indexDir, manifest);
  if (entries.length === 0) return [];
  const store = SentenceStore.open(join(indexDir, STORE_DIR), { readOnly: true });
  const vectors = await VectorFile.open(indexDir);
  try {
    for (const entry of entries) {
      const staging = join(indexDir, DOMAINS_DIR, `.${entry.name}.building`);
      await rm(staging, { recursive: true, force: true });
      await mkdir(staging, { recursive: true });
      const dir = domainDir(indexDir, entry.name);
      for (const f of entry.files.models) await copyFile(join(dir, f), join(staging, f));
      const rows = { store, vectors, deleted, ntotal: manifest.ntotal };
      const scorer = await loadScorer(dir, entry.method);
      await extendColumns(entry, dir, staging, scorer, rows);
      const stats = sigmaStats(await Column.open(join(staging, SIGMA_FILE), manifest.ntotal));
      const carried: DomainEntry = {
        ...entry,
        index: indexIdentity(manifest),
        count: manifest.ntotal,
        changePoint: { ...entry.changePoint, shareBelow: stats.shareBelowZero },
        quantiles: stats.quantiles,
        quantileTable: stats.table,
      };
      await installDomain(indexDir, entry.name, staging);
      await putDomain(indexDir, carried);
    }
    return entries.map((e) => e.name);
  } finally {
    await vectors?.close();
    await store.close();
  }
}

/** The σ and weight columns over `ntotal` rows: the old rows copied, the added ones scored, deleted ones NaN. */
async function extendColumns(
  entry: DomainEntry,
  dir: string,
  staging: string,
  scorer: DomainScorer,
  rows: {
    store: SentenceStore;
    vectors: VectorFile | undefined;
    deleted: ReadonlySet<number>;
    ntotal: number;
  },
): Promise<void> {
  const old = {
    sigma: await Column.open(join(dir, SIGMA_FILE), entry.count),
    weight: await Column.open(join(dir, WEIGHT_FILE), entry.count),
  };
  const out = {
    sigma: await ColumnWriter.open(join(staging, SIGMA_FILE), rows.ntotal),
    weight: await ColumnWriter.open(join(staging, WEIGHT_FILE), rows.ntotal),
  };
  try {
    for (let at = 0; at < rows.ntotal; at += CHUNK) {
      const n = Math.min(CHUNK, rows.ntotal - at);
      const sigma = new Float32Array(n);
      const weight = new Float32Array(n);
      const fresh: number[] = [];
      for (let i = 0; i < n; i++) {
        const id = at + i;
        if (rows.deleted.has(id)) sigma[i] = weight[i] = Number.NaN;
        else if (id < entry.count) {
          sigma[i] = old.sigma.get(id);
          weight[i] = old.weight.get(id);
        } else fresh.push(i);
      }
      if (fresh.length > 0) {
        const ids = fresh.map((i) => at + i);
        const texts = (await rows.store.getMany(ids)).map((r) => r?.text ?? '');
        const vecs = scorer.needsVectors ? await rows.vectors?.readIds(ids) : undefined;
        const scored = scorer.score(texts, vecs);
        fresh.forEach((i, k) => {
          sigma[i] = scored.sigma[k] as number;
          weight[i] = scored.weight[k] as number;
        });
      }
      await out.sigma.write(at, sigma);
      await out.weight.write(at, weight);
    }
    await out.sigma.sync();
    await out.weight.sync();
    await out.sigma.finish();
    await out.weight.finish();
  } catch (e) {
    await out.sigma.close().catch(() => {});
    await out.weight.close().catch(() => {});
    throw e;
  }
}

/** Whether a rebuilt index still has domains scored on the index it was rebuilt from (not carried yet). */
export async function domainsToCarry(indexDir: string, manifest: Manifest): Promise<boolean> {
  return (await entriesToCarry(indexDir, manifest)).length > 0;
}

/** The domains scored on the index `manifest` was rebuilt from (none when it is not a rebuilt one). */
async function entriesToCarry(indexDir: string, manifest: Manifest): Promise<DomainEntry[]> {
  const from = rebuiltFrom(manifest);
  if (from === undefined) return [];
  return Object.values(await readDomains(indexDir)).filter((e) => e.index === from);
}

/** The identity of the index a rebuild started from (its manifest's `build.rebuild` record), if any. */
export function rebuiltFrom(manifest: Manifest): string | undefined {
  const r = manifest.build.rebuild as { from?: unknown; sentences?: unknown; added?: unknown } | undefined;
  if (typeof r?.from !== 'string' || typeof r.sentences !== 'number' || typeof r.added !== 'number') {
    return undefined;
  }
  return indexIdentity({ model: manifest.model, createdAt: r.from, ntotal: r.sentences - r.added });
}

/** What follows a rebuild or compaction (the indexer's followers): the index's domains carried over. */
export const domainFollowers: RebuildFollowers = { pending: domainsToCarry, run: carryDomains };

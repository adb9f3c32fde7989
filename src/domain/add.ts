/**
 * `paramine domain add`: train the scorer, then score every sentence of the index into the σ and
 * weight columns, streaming over the LMDB store (or the kept embeddings) in chunks with bounded memory.
 *
 * Crash safety: everything is built in domains/.NAME.building/. The models are saved first; after each
 * chunk the column rows are synced, then progress.json records how far they go. A run that finds a
 * progress record for the same request (index build, files with their sizes and times, options) loads
 * the saved models and goes on from there. The finished directory replaces domains/NAME by rename and
 * only then does domains.json list it.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceDir, writeFileAtomic } from '../durable.js';
import { ParamineError } from '../errors.js';
import { DEFAULT_SEED, readManifest, VectorFile } from '../index/index.js';
import { createProgress, type ProgressOptions } from '../progress.js';
import { SentenceStore, STORE_DIR } from '../store/index.js';
import { saveLm } from '../text/index.js';
import { Column, ColumnWriter } from './column.js';
import { type SigmaStats, sigmaStats } from './distribution.js';
import {
  DOMAINS_DIR,
  type DomainEntry,
  domainDir,
  domainNameSchema,
  EMBEDDING_MODEL_FILE,
  GENERAL_LM_FILE,
  IN_LM_FILE,
  indexIdentity,
  putDomain,
  readDomains,
  SIGMA_FILE,
  WEIGHT_FILE,
} from './manifest.js';
import { type DomainScorer, type EmbeddingScorer, loadScorer, type MooreLewisScorer } from './scorer.js';
import { readTexts, sampleIndex, type TextEncoder, trainEmbedding, trainMooreLewis } from './train.js';

/** What `paramine domain add` does unless told otherwise (the command shows these as its defaults). */
export const DOMAIN_ADD_DEFAULTS = {
  method: 'ml' as const,
  order: 5,
  minCount: 2,
  seed: DEFAULT_SEED,
  chunk: 20_000,
};

export interface AddDomainOptions {
  index: string;
  name: string;
  inDomain: string[];
  general?: string[] | undefined;
  method?: 'ml' | 'embedding';
  order?: number;
  minCount?: number;
  seed?: number;
  /** Sentences per chunk (one sync + progress record each). */
  chunk?: number;
  /** Replace an existing domain of that name. */
  replace?: boolean;
  /** The index's encoder: needed by the embedding method (and to score an index without kept vectors). */
  encoder?: TextEncoder | undefined;
  progress?: Omit<ProgressOptions, 'label' | 'unit'>;
  log?: (line: string) => void;
}

export interface AddDomainResult {
  entry: DomainEntry;
  resumed: boolean;
  trainMs: number;
  scoreMs: number;
}

interface ProgressRecord {
  request: string;
  done: number;
  training: DomainEntry['training'];
}

const PROGRESS_FILE = 'progress.json';

async function fingerprint(o: AddDomainOptions, identity: string): Promise<string> {
  const files = async (list: readonly string[] | undefined) =>
    Promise.all(
      (list ?? []).map(async (f) => {
        const s = await stat(f).catch(() => undefined);
        return [f, s?.size, s?.mtimeMs];
      }),
    );
  const body = {
    identity,
    method: o.method,
    order: o.order,
    minCount: o.minCount,
    seed: o.seed,
    inDomain: await files(o.inDomain),
    general: await files(o.general),
  };
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}

async function readProgress(dir: string): Promise<ProgressRecord | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, PROGRESS_FILE), 'utf8')) as ProgressRecord;
  } catch {
    return undefined;
  }
}

async function writeProgress(dir: string, p: ProgressRecord): Promise<void> {
  await writeFileAtomic(join(dir, PROGRESS_FILE), JSON.stringify(p));
}

export async function addDomain(input: AddDomainOptions): Promise<AddDomainResult> {
  const o = { ...DOMAIN_ADD_DEFAULTS, ...input };
  const name = domainNameSchema.parse(o.name);
  const log = o.log ?? (() => {});
  const manifest = await readManifest(o.index);
  const identity = indexIdentity(manifest);
  const existing = (await readDomains(o.index))[name];
  if (existing && !o.replace) {
    throw new ParamineError('CONFLICT', `domain '${name}' exists; remove it or pass --replace`, {
      field: 'name',
    });
  }
  if (o.method === 'embedding' && o.encoder === undefined) {
    throw new ParamineError('BAD_INPUT', 'the embedding method needs the index encoder', { field: 'method' });
  }
  const staging = join(o.index, DOMAINS_DIR, `.${name}.building`);
  const request = await fingerprint(o, identity);
  const store = SentenceStore.open(join(o.index, STORE_DIR), { readOnly: true });
  const vectors = await VectorFile.open(o.index);
  try {
    const t0 = performance.now();
    let progress = await readProgress(staging);
    let scorer: DomainScorer;
    const resumed = progress?.request === request;
    if (resumed && progress) {
      log(`resuming domain ${name} at sentence ${progress.done} of ${manifest.ntotal}`);
      scorer = await loadScorer(staging, o.method);
    } else {
      await rm(staging, { recursive: true, force: true });
      await mkdir(staging, { recursive: true });
      const trained = await train(o, store, manifest.ntotal, vectors);
      scorer = trained.scorer;
      progress = { request, done: 0, training: trained.training };
      await writeProgress(staging, progress);
    }
    const trainMs = performance.now() - t0;
    const t1 = performance.now();
    const stats = await scoreAll(o, staging, scorer, store, vectors, manifest.ntotal, progress);
    const scoreMs = performance.now() - t1;
    const entry: DomainEntry = {
      name,
      method: o.method,
      index: identity,
      count: manifest.ntotal,
      files: {
        sigma: SIGMA_FILE,
        weight: WEIGHT_FILE,
        models: o.method === 'ml' ? [IN_LM_FILE, GENERAL_LM_FILE] : [EMBEDDING_MODEL_FILE],
      },
      unit: o.method === 'ml' ? 'bits/token' : 'nats',
      changePoint: { sigma: 0, shareBelow: stats.shareBelowZero },
      quantiles: stats.quantiles,
      quantileTable: stats.table,
      training: progress.training,
      createdAt: new Date().toISOString(),
    };
    await rm(join(staging, PROGRESS_FILE), { force: true });
    await installDomain(o.index, name, staging);
    await putDomain(o.index, entry);
    return { entry, resumed, trainMs, scoreMs };
  } finally {
    await vectors?.close();
    await store.close();
  }
}

async function train(
  o: Required<Pick<AddDomainOptions, 'method' | 'order' | 'minCount' | 'seed'>> & AddDomainOptions,
  store: SentenceStore,
  ntotal: number,
  vectors: VectorFile | undefined,
): Promise<{ scorer: DomainScorer; training: DomainEntry['training'] }> {
  const inTexts = await readTexts(o.inDomain, 'in-domain');
  const fromFiles = o.general !== undefined && o.general.length > 0;
  const general = fromFiles
    ? { texts: await readTexts(o.general ?? [], 'general') }
    : await sampleIndex(store, ntotal, inTexts.length, o.seed);
  if (!fromFiles && general.texts.length > 0.05 * ntotal) {
    // Measured (BENCHMARKS.md): a sample that is most of the index lets the general LM memorize the very
    // sentences it scores, in-domain ones included, and σ turns against them.
    o.log?.(
      `warning: the general sample is ${((100 * general.texts.length) / ntotal).toFixed(0)}% of the index; ` +
        'on an index this small give --general FILE (general text that is not in the index)',
    );
  }
  o.log?.(
    `training ${o.method === 'ml' ? `${o.order}-gram Kneser–Ney LMs` : 'the embedding classifier'} on ` +
      `${inTexts.length} in-domain and ${general.texts.length} general sentences`,
  );
  const dir = join(o.index, DOMAINS_DIR, `.${o.name}.building`);
  const training: DomainEntry['training'] = {
    inDomain: { files: o.inDomain, sentences: inTexts.length },
    general: {
      files: o.general ?? [],
      sentences: general.texts.length,
      ...(fromFiles ? {} : { seed: o.seed }),
    },
  };
  if (o.method === 'ml') {
    const ml: MooreLewisScorer = trainMooreLewis(inTexts, general.texts, o);
    await saveLm(join(dir, IN_LM_FILE), ml.inDomain);
    await saveLm(join(dir, GENERAL_LM_FILE), ml.general);
    return { scorer: ml, training: { ...training, order: o.order, vocabulary: ml.inDomain.vocabulary.size } };
  }
  const emb: EmbeddingScorer = await trainEmbedding(o.encoder as TextEncoder, inTexts, general, vectors);
  await emb.save(dir);
  return { scorer: emb, training };
}

async function scoreAll(
  o: AddDomainOptions & { chunk: number },
  dir: string,
  scorer: DomainScorer,
  store: SentenceStore,
  vectors: VectorFile | undefined,
  ntotal: number,
  progress: ProgressRecord,
): Promise<SigmaStats> {
  const sigmaOut = await ColumnWriter.open(join(dir, SIGMA_FILE), ntotal);
  const weightOut = await ColumnWriter.open(join(dir, WEIGHT_FILE), ntotal);
  const bar = createProgress({ ...o.progress, label: `domain ${o.name}`, unit: 'sentences' });
  try {
    let done = progress.done;
    bar.update(done, ntotal);
    while (done < ntotal) {
      const count = Math.min(o.chunk, ntotal - done);
      const texts: string[] = [];
      for (const { record } of store.range(done, done + count)) texts.push(record.text);
      if (texts.length !== count) {
        throw new ParamineError('BAD_FILE', `the store lacks sentences in [${done}, ${done + count})`);
      }
      let vecs: Float32Array | undefined;
      if (scorer.needsVectors) {
        vecs = vectors ? await vectors.read(done, count) : await (o.encoder as TextEncoder).encode(texts);
      }
      const { sigma, weight } = scorer.score(texts, vecs);
      await sigmaOut.write(done, sigma);
      await weightOut.write(done, weight);
      await sigmaOut.sync();
      await weightOut.sync();
      done += count;
      await writeProgress(dir, { ...progress, done });
      bar.update(done, ntotal);
    }
    bar.stop();
    await sigmaOut.finish();
    await weightOut.finish();
  } catch (e) {
    bar.stop();
    await sigmaOut.close().catch(() => {});
    await weightOut.close().catch(() => {});
    throw e;
  }
  return sigmaStats(await Column.open(join(dir, SIGMA_FILE), ntotal));
}

/** domains/.NAME.building → domains/NAME, the old directory (if any) moved aside first. */
export async function installDomain(index: string, name: string, staging: string): Promise<void> {
  await replaceDir(domainDir(index, name), staging, join(index, DOMAINS_DIR, `.${name}.old`));
}

/**
 * domains.json of an index directory: the domains built for it, each with its method, its column
 * files under domains/NAME/, the index it was scored on, the change point and the distribution of σ,
 * and the combined-mode weights once `paramine domain fit` ran. Written whole to a temp name and
 * renamed; one writer at a time (the CLI), readers see the old or the new file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../durable.js';
import { ParamineError } from '../errors.js';
import type { Manifest } from '../index/index.js';

export const DOMAINS_FILE = 'domains.json';
export const DOMAINS_DIR = 'domains';
export const SIGMA_FILE = 'sigma.f32';
export const WEIGHT_FILE = 'weight.f32';
export const IN_LM_FILE = 'in-domain.kn';
export const GENERAL_LM_FILE = 'general.kn';
export const EMBEDDING_MODEL_FILE = 'embedding.json';

/** Domain names are directory names: letters, digits, '.', '_', '-'. */
export const domainNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'a domain name is 1–64 letters, digits, ".", "_" or "-"');

/** Which build of an index a file belongs to: a rebuilt index under the same name is another index. */
export function indexIdentity(m: Pick<Manifest, 'model' | 'createdAt' | 'ntotal'>): string {
  return `${m.model.sha256}:${m.createdAt}:${m.ntotal}`;
}

const quantilesSchema = z.object({
  min: z.number(),
  p01: z.number(),
  p05: z.number(),
  p10: z.number(),
  p25: z.number(),
  p50: z.number(),
  p75: z.number(),
  p90: z.number(),
  p95: z.number(),
  p99: z.number(),
  max: z.number(),
  mean: z.number(),
});
export type SigmaQuantiles = z.infer<typeof quantilesSchema>;

/** Features of the combined model, in order. */
export const COMBINED_FEATURES = ['cosine', 'rerankProbability', 'sigmaMin', 'sigmaMax'] as const;
export type CombinedFeature = (typeof COMBINED_FEATURES)[number];

export const combinedModelSchema = z.object({
  features: z.array(z.enum(COMBINED_FEATURES)).min(1),
  /** Standardization applied before the weights: (x − mean) / std per feature. */
  mean: z.array(z.number()),
  std: z.array(z.number().positive()),
  weights: z.array(z.number()),
  intercept: z.number(),
  /** The reranker the probabilities came from (its ONNX sha256), when that feature is in. */
  reranker: z.object({ id: z.string(), sha256: z.string() }).optional(),
  pairs: z.object({ file: z.string(), positives: z.number().int(), negatives: z.number().int() }),
  /** Accuracy and log-loss on the fit pairs themselves. */
  training: z.object({ accuracy: z.number(), logLoss: z.number() }),
  fittedAt: z.iso.datetime(),
});
export type CombinedModel = z.infer<typeof combinedModelSchema>;

export const domainEntrySchema = z.object({
  name: domainNameSchema,
  method: z.enum(['ml', 'embedding']),
  /** indexIdentity() of the index the column was scored on. */
  index: z.string().min(1),
  count: z.number().int().nonnegative(),
  files: z.object({
    sigma: z.literal(SIGMA_FILE),
    weight: z.literal(WEIGHT_FILE),
    models: z.array(z.enum([IN_LM_FILE, GENERAL_LM_FILE, EMBEDDING_MODEL_FILE])).min(1),
  }),
  /** What σ is: 'bits/token' (H_in − H_gen) or 'nats' (log-odds general vs in-domain). */
  unit: z.enum(['bits/token', 'nats']),
  /** σ below this looks more in-domain than general (Moore–Lewis: 0), and the share of sentences below it. */
  changePoint: z.object({ sigma: z.number(), shareBelow: z.number().min(0).max(1) }),
  quantiles: quantilesSchema,
  /** σ at every 0.1% of the index, lowest first (what topFraction thresholds are read from). */
  quantileTable: z.array(z.number()).min(2),
  training: z.object({
    inDomain: z.object({ files: z.array(z.string()), sentences: z.number().int().positive() }),
    general: z.object({
      files: z.array(z.string()),
      sentences: z.number().int().positive(),
      /** Drawn from the index itself (uniformly, with this seed) when no --general file was given. */
      seed: z.number().int().optional(),
    }),
    order: z.number().int().optional(),
    vocabulary: z.number().int().optional(),
  }),
  combined: combinedModelSchema.optional(),
  createdAt: z.iso.datetime(),
});
export type DomainEntry = z.infer<typeof domainEntrySchema>;

const domainsFileSchema = z.object({
  format: z.literal('paramine-domains'),
  version: z.literal(1),
  domains: z.record(z.string(), domainEntrySchema),
});
type DomainsFile = z.infer<typeof domainsFileSchema>;

export function domainDir(indexDir: string, name: string): string {
  return join(indexDir, DOMAINS_DIR, domainNameSchema.parse(name));
}

/** Every domain of the index (an index without domains.json has none). */
export async function readDomains(indexDir: string): Promise<Record<string, DomainEntry>> {
  const path = join(indexDir, DOMAINS_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ParamineError('BAD_FILE', `${path}: ${(e as Error).message}`, { cause: e });
  }
  let parsed: DomainsFile;
  try {
    parsed = domainsFileSchema.parse(JSON.parse(text));
  } catch (e) {
    throw new ParamineError('BAD_FILE', `${path}: not a valid domains file (${(e as Error).message})`, {
      field: DOMAINS_FILE,
      cause: e,
    });
  }
  return parsed.domains;
}

export async function writeDomains(indexDir: string, domains: Record<string, DomainEntry>): Promise<void> {
  const path = join(indexDir, DOMAINS_FILE);
  const body: DomainsFile = { format: 'paramine-domains', version: 1, domains };
  await writeFileAtomic(path, `${JSON.stringify(domainsFileSchema.parse(body), null, 2)}\n`);
}

/** Adds or replaces one entry (read-modify-write of the whole file). */
export async function putDomain(indexDir: string, entry: DomainEntry): Promise<void> {
  const all = await readDomains(indexDir);
  all[entry.name] = domainEntrySchema.parse(entry);
  await writeDomains(indexDir, all);
}

/** The entry of `name`, checked against the index it is asked for. */
export function requireDomain(
  domains: Record<string, DomainEntry>,
  name: string,
  identity: string,
  field = 'domain.name',
): DomainEntry {
  const d = domains[name];
  if (d === undefined) {
    const known = Object.keys(domains);
    throw new ParamineError(
      'NOT_FOUND',
      `no domain '${name}' on this index (${known.length ? `it has: ${known.join(', ')}` : 'it has none; add one with paramine domain add'})`,
      { field },
    );
  }
  if (d.index !== identity) {
    throw new ParamineError(
      'CONFLICT',
      `domain '${name}' was scored on another build of this index; run paramine domain add again`,
      { field },
    );
  }
  return d;
}

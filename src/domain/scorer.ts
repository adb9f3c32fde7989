/**
 * The two domain scorers behind one interface: σ (lower = more in-domain, change point 0) and a weight
 * (> 1 = more in-domain) for a batch of sentences.
 *
 *  - 'ml' (Moore & Lewis 2010): σ = H_in(s) − H_gen(s), per-token cross-entropies in bits under the
 *    in-domain and the general Kneser–Ney LM; weight = H_gen / H_in (Pavlick et al. 2015).
 *  - 'embedding': a logistic regression on the sentence embedding, in-domain vs general sample;
 *    σ = −logit (nats, log-odds of general over in-domain); weight = 2 · P(in-domain) (1 at the change
 *    point, as H_gen / H_in is).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ParamineError } from '../errors.js';
import { type KneserNeyLM, lmTokens, loadLm } from '../text/index.js';
import { type LogisticModel, logit, sigmoid } from './logistic.js';
import { EMBEDDING_MODEL_FILE, GENERAL_LM_FILE, IN_LM_FILE } from './manifest.js';

export interface DomainScores {
  sigma: Float32Array;
  weight: Float32Array;
}

export interface DomainScorer {
  readonly method: 'ml' | 'embedding';
  /** Whether score() needs the sentences' embeddings (rows of `dim`). */
  readonly needsVectors: boolean;
  readonly dim?: number | undefined;
  score(texts: readonly string[], vectors?: Float32Array): DomainScores;
}

export class MooreLewisScorer implements DomainScorer {
  readonly method = 'ml' as const;
  readonly needsVectors = false;

  constructor(
    readonly inDomain: KneserNeyLM,
    readonly general: KneserNeyLM,
  ) {}

  static async load(dir: string): Promise<MooreLewisScorer> {
    return new MooreLewisScorer(
      await loadLm(join(dir, IN_LM_FILE)),
      await loadLm(join(dir, GENERAL_LM_FILE)),
    );
  }

  score(texts: readonly string[]): DomainScores {
    const sigma = new Float32Array(texts.length);
    const weight = new Float32Array(texts.length);
    texts.forEach((t, i) => {
      const tokens = lmTokens(t);
      const hIn = this.inDomain.crossEntropy(tokens);
      const hGen = this.general.crossEntropy(tokens);
      sigma[i] = hIn - hGen;
      weight[i] = hGen / hIn;
    });
    return { sigma, weight };
  }
}

const embeddingModelSchema = z.object({
  method: z.literal('embedding'),
  dim: z.number().int().positive(),
  /** The encoder whose vectors it was fit on (the index's). */
  model: z.object({ id: z.string(), sha256: z.string() }),
  mean: z.array(z.number()),
  std: z.array(z.number()),
  weights: z.array(z.number()),
  intercept: z.number(),
});
export type EmbeddingModelFile = z.infer<typeof embeddingModelSchema>;

export class EmbeddingScorer implements DomainScorer {
  readonly method = 'embedding' as const;
  readonly needsVectors = true;
  readonly dim: number;

  constructor(readonly model: LogisticModel & { model: { id: string; sha256: string } }) {
    this.dim = model.weights.length;
  }

  static async load(dir: string): Promise<EmbeddingScorer> {
    const path = join(dir, EMBEDDING_MODEL_FILE);
    let parsed: EmbeddingModelFile;
    try {
      parsed = embeddingModelSchema.parse(JSON.parse(await readFile(path, 'utf8')));
    } catch (e) {
      throw new ParamineError('BAD_FILE', `${path}: ${(e as Error).message}`, { cause: e });
    }
    return new EmbeddingScorer(parsed);
  }

  async save(dir: string): Promise<void> {
    const body: EmbeddingModelFile = { method: 'embedding', dim: this.dim, ...this.model };
    await writeFile(join(dir, EMBEDDING_MODEL_FILE), `${JSON.stringify(body)}\n`);
  }

  score(texts: readonly string[], vectors?: Float32Array): DomainScores {
    if (vectors === undefined || vectors.length !== texts.length * this.dim) {
      throw new ParamineError('INTERNAL', 'the embedding domain scorer needs one vector per sentence');
    }
    const sigma = new Float32Array(texts.length);
    const weight = new Float32Array(texts.length);
    for (let i = 0; i < texts.length; i++) {
      const s = logit(this.model, vectors, i * this.dim);
      sigma[i] = -s;
      weight[i] = 2 * sigmoid(s);
    }
    return { sigma, weight };
  }
}

export async function loadScorer(dir: string, method: 'ml' | 'embedding'): Promise<DomainScorer> {
  return method === 'ml' ? MooreLewisScorer.load(dir) : EmbeddingScorer.load(dir);
}

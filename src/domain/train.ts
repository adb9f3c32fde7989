/**
 * Training the scorers of `paramine domain add`: reading the in-domain files, drawing the general sample
 * (a seeded uniform sample of the index's own sentences as large as the in-domain text, unless general
 * files are given), and fitting the two Kneser–Ney LMs or the embedding logistic regression.
 */
import { assertReadable, readSentences } from '../corpus/index.js';
import { ParamineError } from '../errors.js';
import type { VectorFile } from '../index/index.js';
import { sampleIds } from '../index/index.js';
import type { SentenceStore } from '../store/index.js';
import { countTokens, KneserNeyBuilder, LmVocabulary, normalize } from '../text/index.js';
import { fitLogistic } from './logistic.js';
import { type DomainScorer, EmbeddingScorer, MooreLewisScorer } from './scorer.js';

/** What the embedding method needs from an encoder (the index's own model). */
export interface TextEncoder {
  readonly dim: number;
  readonly modelId: string;
  readonly onnxSha256: string;
  encode(texts: readonly string[]): Promise<Float32Array>;
}

/** Every sentence of the files, normalized; a file that is unreadable or holds none is an error. */
export async function readTexts(files: readonly string[], field: string): Promise<string[]> {
  if (files.length === 0) throw new ParamineError('BAD_INPUT', `${field} needs at least one file`, { field });
  const out: string[] = [];
  const perFile = new Array<number>(files.length).fill(0);
  for (const f of files) await assertReadable(f, field);
  for await (const rec of readSentences(files, { onBadRecord: 'fail' })) {
    if ('error' in rec) throw rec.error;
    const t = normalize(rec.text);
    if (t === '') continue;
    out.push(t);
    perFile[rec.fileIndex]!++;
  }
  perFile.forEach((n, i) => {
    if (n === 0) {
      throw new ParamineError('BAD_INPUT', `${files[i]} holds no sentences`, { field });
    }
  });
  return out;
}

/** `count` sentences of the index drawn uniformly with `seed` (ids sorted). */
export async function sampleIndex(
  store: SentenceStore,
  ntotal: number,
  count: number,
  seed: number,
): Promise<{ ids: number[]; texts: string[] }> {
  const ids = sampleIds(ntotal, Math.min(count, ntotal), seed);
  const texts: string[] = [];
  for (let i = 0; i < ids.length; i += 4096) {
    const part = ids.slice(i, i + 4096);
    for (const [k, r] of (await store.getMany(part)).entries()) {
      if (r === undefined)
        throw new ParamineError('BAD_FILE', `sentence ${part[k]} is missing from the store`);
      texts.push(r.text);
    }
  }
  return { ids, texts };
}

export interface MlTrainOptions {
  order: number;
  /** In-domain words seen fewer times become <unk> in both LMs (Moore & Lewis: 2). */
  minCount: number;
}

export function trainMooreLewis(
  inDomain: readonly string[],
  general: readonly string[],
  o: MlTrainOptions,
): MooreLewisScorer {
  const vocabulary = LmVocabulary.fromCounts(countTokens(inDomain), o.minCount);
  const fit = (texts: readonly string[]) => {
    const b = new KneserNeyBuilder(vocabulary, o.order);
    for (const t of texts) b.addText(t);
    return b.build();
  };
  return new MooreLewisScorer(fit(inDomain), fit(general));
}

const ENCODE_CHUNK = 1024;

async function encodeAll(encoder: TextEncoder, texts: readonly string[]): Promise<Float32Array> {
  const out = new Float32Array(texts.length * encoder.dim);
  for (let i = 0; i < texts.length; i += ENCODE_CHUNK) {
    out.set(await encoder.encode(texts.slice(i, i + ENCODE_CHUNK)), i * encoder.dim);
  }
  return out;
}

/**
 * In-domain sentences (encoded) against the general sample (the index's kept vectors when the sample
 * comes from the index and it has them; encoded otherwise).
 */
export async function trainEmbedding(
  encoder: TextEncoder,
  inDomain: readonly string[],
  general: { texts: readonly string[]; ids?: readonly number[] },
  vectors: VectorFile | undefined,
): Promise<EmbeddingScorer> {
  const d = encoder.dim;
  const inVecs = await encodeAll(encoder, inDomain);
  const genVecs =
    general.ids !== undefined && vectors !== undefined
      ? await vectors.readIds(general.ids)
      : await encodeAll(encoder, general.texts);
  const n = inDomain.length + general.texts.length;
  const x = new Float32Array(n * d);
  x.set(inVecs, 0);
  x.set(genVecs, inVecs.length);
  const y = new Uint8Array(n);
  y.fill(1, 0, inDomain.length);
  const model = fitLogistic(x, y, d, { l2: 1e-3, iterations: 300, learningRate: 0.05 });
  return new EmbeddingScorer({ ...model, model: { id: encoder.modelId, sha256: encoder.onnxSha256 } });
}

export type { DomainScorer };

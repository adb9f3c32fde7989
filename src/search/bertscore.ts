/**
 * The BERTScore filter (`filter.bertScoreMin`, ParaSCI's "BERTScore > 0.7"): greedy-matching F1 of the
 * two sentences' contextual token vectors (encode/bertscore.ts), computed last among the filters, only
 * for candidates every cheaper filter kept, each distinct text encoded once per call. Optional idf
 * weights come from document frequencies over a uniform sample of the index's own sentences.
 */
import { bertScore, IdfWeights, type TokenVectors } from '../encode/index.js';
import type { SentenceStore } from '../store/index.js';
import type { Candidate } from './types.js';

export interface TokenEncoder {
  encodeTokens(texts: readonly string[]): Promise<TokenVectors>;
  tokenIds(texts: readonly string[]): Promise<Int32Array[]>;
}

/**
 * ParaSCI's SciBERT thresholds (0.7; 0.6 for definition pairs) carried over to all-MiniLM-L6-v2's last
 * layer by baseline rescaling, measured on ParaSCI-ACL val (docs/bertscore.md,
 * docs/benchmarks/bertscore-calibration-parasci.json): 0.545 keeps 88.0% of the val pairs and 3.9% of
 * random pairs; 0.394 keeps 99.4% and 10.8%.
 */
export const PARASCI_BERTSCORE_MIN = 0.545;
export const PARASCI_DEFINITIONS_BERTSCORE_MIN = 0.394;

const CHUNK = 256;

/** Sets `bertScore` on every candidate and keeps those above `min` (strictly, as the paper states it). */
export async function bertScoreFilter(
  rows: Candidate[][],
  queries: readonly string[],
  tokens: TokenEncoder,
  min: number,
  idf?: IdfWeights,
): Promise<void> {
  const texts: string[] = [];
  const at = new Map<string, number>();
  const slot = (t: string) => {
    let i = at.get(t);
    if (i === undefined) {
      i = texts.length;
      at.set(t, i);
      texts.push(t);
    }
    return i;
  };
  rows.forEach((row, q) => {
    if (row.length === 0) return;
    slot(queries[q] as string);
    for (const c of row) slot(c.text);
  });
  if (texts.length === 0) return;
  const parts: TokenVectors[] = [];
  for (let i = 0; i < texts.length; i += CHUNK)
    parts.push(await tokens.encodeTokens(texts.slice(i, i + CHUNK)));
  const joined = joinTokenVectors(parts);
  rows.forEach((row, q) => {
    const qi = at.get(queries[q] as string);
    if (qi === undefined) return;
    for (const c of row) c.bertScore = bertScore(joined, qi, at.get(c.text) as number, idf).f1;
    const kept = row.filter((c) => (c.bertScore as number) > min);
    row.splice(0, row.length, ...kept);
  });
}

function joinTokenVectors(parts: readonly TokenVectors[]): TokenVectors {
  if (parts.length === 1) return parts[0] as TokenVectors;
  const dim = parts[0]?.dim ?? 0;
  const n = parts.reduce((s, p) => s + p.offsets.length - 1, 0);
  const total = parts.reduce((s, p) => s + p.ids.length, 0);
  const offsets = new Int32Array(n + 1);
  const ids = new Int32Array(total);
  const vectors = new Float32Array(total * dim);
  let text = 0;
  let tok = 0;
  for (const p of parts) {
    for (let i = 0; i + 1 < p.offsets.length; i++) offsets[++text] = tok + p.offsets[i + 1]!;
    ids.set(p.ids, tok);
    vectors.set(p.vectors, tok * dim);
    tok += p.ids.length;
  }
  return { dim, offsets, ids, vectors };
}

/** Document frequencies of the encoder's tokens over a seeded uniform sample of the index. */
export async function indexIdf(
  store: SentenceStore,
  ntotal: number,
  tokens: TokenEncoder,
  sample = 50_000,
): Promise<IdfWeights> {
  const step = Math.max(1, Math.floor(ntotal / sample));
  const ids: number[] = [];
  for (let id = 0; id < ntotal && ids.length < sample; id += step) ids.push(id);
  const docs: Int32Array[] = [];
  for (let i = 0; i < ids.length; i += 4096) {
    const texts = (await store.getMany(ids.slice(i, i + 4096))).map((r) => r?.text ?? '');
    docs.push(...(await tokens.tokenIds(texts)));
  }
  return IdfWeights.fromDocuments(docs);
}

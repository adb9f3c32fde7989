/** The encoder benchmark's Markdown: one row per batch size, then the single figures. */
import type { EncodeResult, EncodeRow } from './encode-bench.js';

const f = (x: unknown) => (typeof x === 'number' ? (Number.isNaN(x) ? 'n/a' : x.toFixed(0)) : String(x));
const times = (x: number) => (Number.isNaN(x) ? 'n/a' : `${x.toFixed(2)}×`);
const ratio = (x: number) => (Number.isNaN(x) ? 'n/a' : x.toFixed(2));

function row(r: EncodeRow): string {
  return (
    `| ${r.batch} | ${f(r.oursFp32)} | ${f(r.bareFp32)} | ${ratio(r.oursFp32 / r.bareFp32)} | ${f(r.oursInt8)} | ` +
    `${f(r.bareInt8)} | ${ratio(r.oursInt8 / r.bareInt8)} | ${f(r.st)} | ${times(r.oursFp32 / r.st)} | ${times(r.oursInt8 / r.st)} |`
  );
}

type Quantiles = { min: number; p5: number; median: number; mean: number };
const cosines = (q: Quantiles) =>
  `cosine min ${q.min.toFixed(4)}, p5 ${q.p5.toFixed(4)}, median ${q.median.toFixed(4)}, mean ${q.mean.toFixed(4)}`;

export function encodeMarkdown(r: EncodeResult): string {
  const st = r.sentenceTransformers;
  const stName =
    typeof st === 'string' ? st : `${st.sentence_transformers}, torch ${st.torch} (${st.threads} threads)`;
  const lines = [
    `sentences: ${r.sentences} ParaSCI-ACL val; threads: ${r.threads}; sentence-transformers: ${stName}`,
    '',
    '| batch | ours fp32 | bare run fp32 | ours/bare | ours int8 | bare run int8 | ours/bare | sentence-transformers fp32 | ours fp32 / ST | ours int8 / ST |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...r.rows.map(row),
    '',
    `tokenization alone: ${f(r.tokenize)} sentences/s (one thread)`,
    `ours fp32, batch ${r.rows[0]?.batch}, ORT thread spinning off: ${f(r.spinOff)} sentences/s (on: ${f(r.rows[0]?.oursFp32)})`,
    ...(r.int8
      ? [
          `int8 vs sentence-transformers fp32 (${r.int8.nST} fixture sentences): ${cosines(r.int8.vsSentenceTransformers)}`,
          `int8 vs our fp32 (${r.sentences} bench sentences): ${cosines(r.int8.vsOursFp32)}`,
        ]
      : []),
    `cross-encoder: ${f(r.crossEncoder.pairsPerS)} pairs/s, batch 32, max length ${r.crossEncoder.maxLength}, ${r.crossEncoder.labels.length} labels — ${r.crossEncoder.model}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** The index benchmark's Markdown: build figures per factory, then search figures per factory and nprobe. */
import { getNumThreads } from '../native/index.js';
import type { Config } from './index-bench.js';

export const DIM = 384;
export const K = 10;

export interface Row {
  nprobe: number;
  recall: number;
  singleQps: number;
  batchQps: number;
  /** Ours only: single queries with 4 in flight (the service's situation). */
  concurrentQps?: number;
}
export interface FactoryResult {
  factory: string;
  trainS: number;
  addPerS: number;
  rssDeltaBytes: number;
  rssBytes: number;
  fileBytes: number;
  rows: Row[];
}
export interface SideResult {
  faissVersion: string;
  factories: FactoryResult[];
}

function fmt(x: number, digits = 0): string {
  return x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function ratio(a: number, b: number | undefined): string {
  return b === undefined ? '' : ` (${(a / b).toFixed(2)})`;
}

export function indexMarkdown(
  cfg: Config,
  mine: SideResult,
  py: SideResult | undefined,
  extra: { genS: number; exactQps: number },
): string {
  const lines: string[] = [];
  lines.push(
    `n = ${fmt(cfg.n)} clustered 384-d unit vectors (seed ${cfg.seed}), ${cfg.nq} held-out queries, inner product, ` +
      `k = 10, training sample ${fmt(cfg.train)}, ${cfg.threads} OpenMP threads, ${getNumThreads().blas} BLAS thread(s), kFactor ${cfg.kFactor} for refine stages. ` +
      `Exact flat search: ${fmt(extra.exactQps)} queries/s batched. Ratios are ours/theirs (Python FAISS ${py?.faissVersion ?? 'not run'}).`,
    '',
    '| factory | train s ours / theirs | add vec/s ours / theirs | index file bytes/vector | RSS after add, MB | RSS growth during add, bytes/vector |',
    '|---|---|---|---|---|---|',
  );
  for (const f of mine.factories) {
    const p = py?.factories.find((x) => x.factory === f.factory);
    lines.push(
      `| ${f.factory} | ${fmt(f.trainS, 1)}${p ? ` / ${fmt(p.trainS, 1)}` : ''} | ${fmt(f.addPerS)}${p ? ` / ${fmt(p.addPerS)}${ratio(f.addPerS, p.addPerS)}` : ''} | ` +
        `${fmt(f.fileBytes / cfg.n, 1)}${p ? ` / ${fmt(p.fileBytes / cfg.n, 1)}` : ''} | ` +
        `${fmt(f.rssBytes / 2 ** 20)}${p ? ` / ${fmt(p.rssBytes / 2 ** 20)}` : ''} | ` +
        `${fmt(f.rssDeltaBytes / cfg.n, 1)}${p ? ` / ${fmt(p.rssDeltaBytes / cfg.n, 1)}` : ''} |`,
    );
  }
  lines.push(
    '',
    '| factory | nprobe | recall@10 ours / theirs | single-query QPS ours / theirs | batch QPS ours / theirs | single queries, 4 in flight (ours) |',
    '|---|---|---|---|---|---|',
  );
  for (const f of mine.factories) {
    const p = py?.factories.find((x) => x.factory === f.factory);
    for (const r of f.rows) {
      const q = p?.rows.find((x) => x.nprobe === r.nprobe);
      lines.push(
        `| ${f.factory} | ${r.nprobe} | ${r.recall.toFixed(3)}${q ? ` / ${q.recall.toFixed(3)}` : ''} | ` +
          `${fmt(r.singleQps)}${q ? ` / ${fmt(q.singleQps)}${ratio(r.singleQps, q.singleQps)}` : ''} | ` +
          `${fmt(r.batchQps)}${q ? ` / ${fmt(q.batchQps)}${ratio(r.batchQps, q.batchQps)}` : ''} | ${fmt(r.concurrentQps ?? 0)} |`,
      );
    }
  }
  return lines.join('\n');
}

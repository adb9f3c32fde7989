/**
 * sentence-transformers on PyTorch as the reference the encoder benchmark times against: the venv's
 * python runs bench/python/reference_embeddings.py --bench on the same sentences and answers with one JSON line.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

const stResultSchema = z.object({
  sentence_transformers: z.string(),
  torch: z.string(),
  threads: z.number(),
  results: z.array(z.object({ batch: z.number(), sentences_per_s: z.number() })),
});
export type StResult = z.output<typeof stResultSchema>;

/** sentence-transformers' sentences/s at each batch size, or why it did not run. */
export function sentenceTransformers(
  python: string,
  texts: readonly string[],
  batches: readonly number[],
  threads: number,
): StResult | string {
  if (!existsSync(python)) return `skipped: no python at ${python} (set PARAMINE_PYTHON)`;
  const dir = mkdtempSync(join(tmpdir(), 'paramine-bench-'));
  try {
    const file = join(dir, 'sentences.txt');
    writeFileSync(file, `${texts.join('\n')}\n`);
    const args = ['--bench', file, '--batch-sizes', batches.join(','), '--threads', String(threads)];
    const r = spawnSync(python, ['bench/python/reference_embeddings.py', ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 1 << 24,
    });
    if (r.status !== 0) return `failed: ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' ')}`;
    const line = r.stdout.trim().split('\n').pop() ?? '';
    return stResultSchema.parse(JSON.parse(line));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

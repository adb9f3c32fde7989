/**
 * `--max-ram`: the RAM budget is checked before any work. The collection's size is not known until its
 * sentences are embedded, so the check uses an upper bound read cheaply: the input's line count (records;
 * duplicates and filtered lines only lower it), or the rows of the given .npy embeddings. The index's
 * RAM grows with n, so when the smallest plan does not fit at that bound the build is refused at once,
 * naming the budget that would do; once embedded, the real count picks the plan (shards.ts).
 */

import { openText, readError } from '../corpus/index.js';
import { readModelDir } from '../models/dir.js';
import { resolveModelDir } from '../models/resolve.js';
import { NpyFile } from './embeddings.js';
import type { BuildOptions } from './options.js';
import { buildPlan } from './shards.js';

/** Lines of a text file (gzip too); a last line without a newline counts. */
export async function countLines(path: string): Promise<number> {
  const { stream } = await openText(path);
  let lines = 0;
  let last = 0x0a;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let at = chunk.indexOf(0x0a);
      while (at >= 0) {
        lines++;
        at = chunk.indexOf(0x0a, at + 1);
      }
      if (chunk.length > 0) last = chunk[chunk.length - 1] as number;
    }
  } catch (e) {
    throw readError(path, e);
  }
  return lines + (last === 0x0a ? 0 : 1);
}

/** Most sentences the build can keep: .npy rows when given, else the inputs' lines. */
export async function recordBound(options: BuildOptions): Promise<number> {
  if (options.embeddings) {
    let rows = 0;
    for (const path of options.embeddings) {
      const npy = await NpyFile.open(path);
      rows += npy.header.rows;
      await npy.close();
    }
    return rows;
  }
  let lines = 0;
  for (const path of options.inputs) lines += await countLines(path);
  return lines;
}

/** The encoder's output size, from its config (the model itself is not loaded). */
async function modelDim(model: string): Promise<number | undefined> {
  const md = await readModelDir(resolveModelDir(model));
  return md.config.hidden_size;
}

/**
 * Refuses (OVER_BUDGET) a build whose index cannot fit `--max-ram` at the inputs' record count; returns
 * that count, or undefined when no budget is given (nothing read then).
 */
export async function checkBudget(options: BuildOptions): Promise<number | undefined> {
  if (options.maxRam === undefined) return undefined;
  const dim = await modelDim(options.model);
  if (dim === undefined) return undefined;
  const n = Math.max(1, await recordBound(options));
  buildPlan(options, n, dim);
  return n;
}

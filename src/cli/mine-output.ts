/**
 * What `paramine mine` writes: NDJSON under a temporary name then renamed (whole or absent), and with
 * --append the earlier output first, leaving out the pairs already in it.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { replaceFile } from '../durable.js';
import { type MinedPair, pairKey } from '../jobs/index.js';
import { parseInput } from '../validate.js';

export interface EarlierPairs {
  lines: string[];
  keys: Set<string>;
}

/** The lines of an earlier --out (empty when there is none) and their pairs' keys. */
export async function existingPairs(path: string): Promise<EarlierPairs> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return { lines: [], keys: new Set() };
    throw e;
  }
  const lines: string[] = [];
  const keys = new Set<string>();
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const row = parseInput(minedLine, JSON.parse(line), `${path}:${i + 1}`);
    if (row.a.id !== null && row.b.id !== null) keys.add(pairKey(row.a.id, row.b.id));
    lines.push(`${line}\n`);
  });
  return { lines, keys };
}

const minedLine = z.looseObject({
  a: z.looseObject({ id: z.number().int().nullable() }),
  b: z.looseObject({ id: z.number().int().nullable() }),
});

/** Writes durably under a temporary name and renames, so the output is either whole or absent. */
export async function writeLines(path: string, lines: Iterable<string>): Promise<void> {
  await replaceFile(path, async (tmp) => {
    const out = createWriteStream(tmp);
    for (const line of lines) if (!out.write(line)) await once(out, 'drain');
    out.end();
    await once(out, 'finish');
  });
}

/** The earlier pairs, then the job's new ones (numbered on); resolves to how many were new. */
export async function writePairs(
  path: string,
  earlier: EarlierPairs,
  pairs: Iterable<{ pair: MinedPair }>,
): Promise<number> {
  let added = 0;
  await writeLines(
    path,
    (function* () {
      yield* earlier.lines;
      for (const { pair } of pairs) {
        if (pair.a.id !== null && pair.b.id !== null && earlier.keys.has(pairKey(pair.a.id, pair.b.id)))
          continue;
        yield `${JSON.stringify({ seq: earlier.lines.length + added++, ...pair })}\n`;
      }
    })(),
  );
  return added;
}

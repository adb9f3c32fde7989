/**
 * `paramine pairs dump FILE...`: every pair of one or more labeled pair files as normalized JSON lines, so the
 * training scripts (training/paramine_train) read pairs through this one reader and label scheme instead of a
 * second implementation of the formats. One line per pair:
 *   {"s1", "s2", "label": str | null, "positive": bool | null, "scheme", "source": FILE, "where": "FILE:LINE"}
 * `positive` is the file's label scheme's verdict (null = the scheme cannot say); texts and labels are kept as the
 * data has them.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { readPairs } from '../corpus/pairs.js';
import { detectScheme } from '../text/labels.js';
import { parseInput } from '../validate.js';

const dumpSchema = z.object({
  positive: z.array(z.string()).optional(),
  out: z.string().optional(),
});

/** The JSON lines of one file's pairs (exported for tests). */
export async function pairLines(path: string, positive?: readonly string[]): Promise<string[]> {
  const pairs = await readPairs(path);
  const scheme = detectScheme(
    pairs.map((p) => p.label),
    positive === undefined ? {} : { positive },
  );
  return pairs.map((p) =>
    JSON.stringify({
      s1: p.s1,
      s2: p.s2,
      label: p.label ?? null,
      positive: scheme.isPositive(p.label) ?? null,
      scheme: scheme.name,
      source: path,
      where: p.where,
    }),
  );
}

function write(out: WriteStream | NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    out.write(text, (e) => (e ? reject(e) : resolve()));
  });
}

export function register(program: Command): void {
  const pairs = program.command('pairs').description('labeled pair files (the formats `bench` reads)');
  pairs
    .command('dump')
    .description(
      'write every pair as a JSON line {s1, s2, label, positive, scheme, source, where} (for the training scripts)',
    )
    .argument(
      '<files...>',
      'pair files: MRPC TSV, MultiPIT CSV, Turku JSON, ParaSCI .src, TSV/CSV/JSON/JSONL',
    )
    .option('--positive <labels>', 'comma-separated labels counted as positive', (v: string) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .option('--out <file>', 'write here instead of standard output')
    .action(async (files: string[], raw: Record<string, unknown>) => {
      const o = parseInput(dumpSchema, raw, 'options');
      const out = o.out === undefined ? process.stdout : createWriteStream(o.out);
      for (const file of files) {
        const lines = await pairLines(file, o.positive);
        // in chunks: one write per file could be hundreds of MB
        for (let i = 0; i < lines.length; i += 4096) {
          await write(out, `${lines.slice(i, i + 4096).join('\n')}\n`);
        }
      }
      if (out !== process.stdout) await new Promise<void>((r) => (out as WriteStream).end(r));
    });
}
